"""Host runtime: user ownership with fencing epochs, and the vector-index outbox.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "user_owners",
        sa.Column(
            "tenant_id", sa.String(48), sa.ForeignKey("tenants.tenant_id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "user_id", name=op.f("pk_user_owners")),
    )
    op.create_table(
        "index_outbox",
        sa.Column("seq", AUTO_ID, autoincrement=True, nullable=False),
        sa.Column("tenant_id", sa.String(48), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("memory_id", sa.String(64), nullable=True),
        sa.Column("op", sa.String(16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_index_outbox")),
    )
    op.create_index("ix_index_outbox_scope", "index_outbox", ["tenant_id", "user_id"])


def downgrade() -> None:
    op.drop_table("index_outbox")
    op.drop_table("user_owners")
