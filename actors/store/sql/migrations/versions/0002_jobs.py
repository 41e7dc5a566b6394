"""Batch jobs: user leases, profile snapshots (digests only), cohort features, job runs.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _tenant_key() -> sa.Column:
    return sa.Column(
        "tenant_id", sa.String(48), sa.ForeignKey("tenants.tenant_id", ondelete="CASCADE"), nullable=False
    )


def _moment(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "user_leases",
        _tenant_key(),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("holder", sa.String(64), nullable=False),
        _moment("expires_at"),
        sa.PrimaryKeyConstraint("tenant_id", "user_id", name=op.f("pk_user_leases")),
    )
    op.create_table(
        "profile_snapshots",
        _tenant_key(),
        sa.Column("user_id", sa.String(128), nullable=False),
        sa.Column("digests", sa.JSON(), nullable=False),
        sa.Column("run_id", sa.String(64), nullable=False),
        _moment("taken_at"),
        sa.PrimaryKeyConstraint("tenant_id", "user_id", name=op.f("pk_profile_snapshots")),
    )
    op.create_table(
        "cohort_features",
        _tenant_key(),
        sa.Column("slot", sa.String(128), nullable=False),
        sa.Column("polarity", sa.String(32), nullable=False),
        sa.Column("value", sa.String(512), nullable=False),
        sa.Column("users", sa.Integer(), nullable=False),
        sa.Column("cohort_size", sa.Integer(), nullable=False),
        sa.Column("share", sa.Float(), nullable=False),
        _moment("computed_at"),
        sa.PrimaryKeyConstraint("tenant_id", "slot", "polarity", "value", name=op.f("pk_cohort_features")),
    )
    op.create_table(
        "job_runs",
        sa.Column("run_id", sa.String(64), nullable=False),
        sa.Column("job", sa.String(32), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("report", sa.JSON(), nullable=False),
        _moment("started_at"),
        _moment("finished_at", nullable=True),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_job_runs")),
    )
    op.create_index("ix_job_runs_job_started", "job_runs", ["job", "started_at"])


def downgrade() -> None:
    for table in ("job_runs", "cohort_features", "profile_snapshots", "user_leases"):
        op.drop_table(table)
