"""The SQL store (SQLAlchemy 2: SQLite / PostgreSQL), the source of truth, with its tables and migrations."""
