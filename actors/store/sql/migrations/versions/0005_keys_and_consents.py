"""Further API keys per tenant (keys bound to one user, a rotated-out primary key's overlap), and each
user's own consent to group profiles.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.String(32), nullable=False),
        sa.Column(
            "tenant_id", sa.String(48), sa.ForeignKey("tenants.tenant_id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("user_id", sa.String(128), nullable=True),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key_id", name=op.f("pk_api_keys")),
    )
    op.create_index("ix_api_keys_tenant_hash", "api_keys", ["tenant_id", "key_hash"], unique=True)
    op.create_table(
        "user_consents",
        sa.Column(
            "tenant_id", sa.String(48), sa.ForeignKey("tenants.tenant_id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("group_profiles", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "user_id", name=op.f("pk_user_consents")),
    )


def downgrade() -> None:
    op.drop_table("user_consents")
    op.drop_index("ix_api_keys_tenant_hash", table_name="api_keys")
    op.drop_table("api_keys")
