"""Whole source turns beside extracted clauses: the turn's text, for recall.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_items") as batch:
        batch.add_column(sa.Column("source_text", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory_items") as batch:
        batch.drop_column("source_text")
