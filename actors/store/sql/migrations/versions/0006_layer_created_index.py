"""A layer's items by creation time: the archive of a period is read through the index, not in full.

Replaces the (tenant, user, layer) index, which the new one covers. A question naming an old month reads
the user's archived items of that month beyond what memory holds; with (tenant, user, layer) alone
PostgreSQL read the user's whole archive to find them (2,510 buffers for 10,000 archived items).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_memory_items_scope_layer_created",
        "memory_items",
        ["tenant_id", "user_id", "layer", "created_at"],
    )
    op.drop_index("ix_memory_items_scope_layer", table_name="memory_items")


def downgrade() -> None:
    op.create_index("ix_memory_items_scope_layer", "memory_items", ["tenant_id", "user_id", "layer"])
    op.drop_index("ix_memory_items_scope_layer_created", table_name="memory_items")
