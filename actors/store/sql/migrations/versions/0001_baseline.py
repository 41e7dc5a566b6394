"""Baseline: tenants, memory items, audit events, alerts, session snapshots, applied requests, tombstones.

Written out with plain column types (no imports from the application) so this revision stays what it was
when later models change. Enums are VARCHAR(32) holding the enum values; datetimes are timestamptz on
PostgreSQL, UTC text on SQLite.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

AUTO_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _tenant_id(*, foreign: bool = False, primary: bool = False) -> sa.Column:
    references = [sa.ForeignKey("tenants.tenant_id", ondelete="CASCADE")] if foreign else []
    return sa.Column("tenant_id", sa.String(48), *references, primary_key=primary, nullable=False)


def _required(name: str, type_: sa.types.TypeEngine) -> sa.Column:
    return sa.Column(name, type_, nullable=False)


def _optional(name: str, type_: sa.types.TypeEngine) -> sa.Column:
    return sa.Column(name, type_, nullable=True)


def _moment(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _enum(name: str) -> sa.Column:
    return sa.Column(name, sa.String(32), nullable=False)


def upgrade() -> None:
    op.create_table(
        "tenants",
        _tenant_id(primary=True),
        _required("name", sa.String(200)),
        _required("api_key_hash", sa.String(64)),
        _required("policy", sa.JSON()),
        _required("group_profile_consent", sa.Boolean()),
        _moment("created_at"),
        _optional("max_users", sa.Integer()),
        _optional("requests_per_minute", sa.Integer()),
        sa.PrimaryKeyConstraint("tenant_id", name=op.f("pk_tenants")),
    )
    op.create_table(
        "memory_items",
        _required("memory_id", sa.String(64)),
        _tenant_id(foreign=True),
        _required("user_id", sa.String(128)),
        _required("content", sa.Text()),
        _enum("kind"),
        _enum("layer"),
        _enum("state"),
        _enum("polarity"),
        _optional("slot", sa.String(128)),
        _optional("value", sa.Text()),
        _required("content_hash", sa.String(64)),
        _required("importance", sa.Float()),
        _required("confidence", sa.Float()),
        _required("decay_score", sa.Float()),
        _required("write_score", sa.Float()),
        _required("access_count", sa.Integer()),
        _enum("source"),
        _optional("source_session_id", sa.String(128)),
        _required("source_dialog_ids", sa.JSON()),
        _required("confirmed_sessions", sa.JSON()),
        _required("contradiction_count", sa.Integer()),
        _required("positive_engagements", sa.Integer()),
        _required("forced", sa.Boolean()),
        _moment("created_at"),
        _moment("updated_at"),
        _moment("last_accessed_at"),
        _moment("frozen_at", nullable=True),
        _moment("archived_at", nullable=True),
        _required("version", sa.Integer()),
        _required("supersedes", sa.JSON()),
        _optional("superseded_by", sa.String(64)),
        _required("conflicts_with", sa.JSON()),
        _required("complements", sa.JSON()),
        _required("merged_from", sa.JSON()),
        _optional("embedding", sa.LargeBinary()),
        sa.PrimaryKeyConstraint("memory_id", name=op.f("pk_memory_items")),
    )
    for suffix, column in (
        ("state", "state"),
        ("layer", "layer"),
        ("content_hash", "content_hash"),
        ("slot", "slot"),
    ):
        op.create_index(f"ix_memory_items_scope_{suffix}", "memory_items", ["tenant_id", "user_id", column])

    op.create_table(
        "audit_events",
        sa.Column("id", AUTO_ID, autoincrement=True, nullable=False),
        _tenant_id(),
        _required("user_id", sa.String(128)),
        _optional("memory_id", sa.String(64)),
        _required("action", sa.String(64)),
        _required("actor", sa.String(200)),
        _required("reason", sa.Text()),
        _optional("before", sa.JSON(none_as_null=True)),
        _optional("after", sa.JSON(none_as_null=True)),
        _optional("source_dialog_id", sa.String(128)),
        _moment("at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_events")),
    )
    op.create_index("ix_audit_events_scope_memory", "audit_events", ["tenant_id", "user_id", "memory_id"])

    op.create_table(
        "alerts",
        _required("alert_id", sa.String(64)),
        _tenant_id(foreign=True),
        _required("user_id", sa.String(128)),
        _enum("kind"),
        _optional("memory_id", sa.String(64)),
        _required("message", sa.Text()),
        _required("related_ids", sa.JSON()),
        _enum("status"),
        _moment("created_at"),
        _moment("resolved_at", nullable=True),
        sa.PrimaryKeyConstraint("alert_id", name=op.f("pk_alerts")),
    )
    op.create_index("ix_alerts_scope_status", "alerts", ["tenant_id", "user_id", "status"])

    op.create_table(
        "session_snapshots",
        _tenant_id(foreign=True),
        _required("user_id", sa.String(128)),
        _required("session_id", sa.String(128)),
        _required("text", sa.Text()),
        _moment("created_at"),
        sa.PrimaryKeyConstraint("tenant_id", "user_id", "session_id", name=op.f("pk_session_snapshots")),
    )
    op.create_table(
        "applied_requests",
        _tenant_id(foreign=True),
        _required("user_id", sa.String(128)),
        _required("request_id", sa.String(128)),
        _required("result", sa.JSON()),
        _moment("at"),
        sa.PrimaryKeyConstraint("tenant_id", "user_id", "request_id", name=op.f("pk_applied_requests")),
    )
    op.create_table(
        "tombstones",
        sa.Column("id", AUTO_ID, autoincrement=True, nullable=False),
        _tenant_id(),
        _required("user_id", sa.String(128)),
        _optional("memory_id", sa.String(64)),
        _moment("at"),
        _required("reason", sa.Text()),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tombstones")),
    )
    op.create_index("ix_tombstones_scope_memory", "tombstones", ["tenant_id", "user_id", "memory_id"])


def downgrade() -> None:
    for table in (
        "tombstones",
        "applied_requests",
        "session_snapshots",
        "alerts",
        "audit_events",
        "memory_items",
        "tenants",
    ):
        op.drop_table(table)
