"""The turns said just before a memory in its session: its context, for recall (``MemoryItem.context``).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("memory_items") as batch:
        batch.add_column(sa.Column("context", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("memory_items") as batch:
        batch.drop_column("context")
