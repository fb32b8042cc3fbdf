"""Migrations expand before they contract, against the previous release's models."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.upgrades.expand_contract import contracts_in, declared_contracts, problems
from tests.upgrades.previous_release import VERSIONS, model_columns, revisions

HEADER = '"""A migration."""\nimport sqlalchemy as sa\nfrom alembic import op\n'


@pytest.fixture(scope="module")
def previous_columns(previous_release: Path) -> dict[str, list[str]]:
    return model_columns(previous_release)


def test_this_releases_migrations_expand_before_they_contract(
    previous_release: Path, previous_columns: dict[str, list[str]]
) -> None:
    old = revisions(previous_release / "migrations" / "versions")
    landing = {r: p for r, p in revisions(VERSIONS).items() if r not in old}
    found = {p.name: problems(p.read_text(), previous_columns) for p in landing.values()}
    assert {name: listed for name, listed in found.items() if listed} == {}


def test_no_migration_contracts_without_declaring_it() -> None:
    for path in revisions(VERSIONS).values():
        source = path.read_text()
        assert contracts_in(source) == declared_contracts(ast.parse(source)), path.name


def _upgrade(body: str, contracts: tuple[str, ...] | None = None) -> str:
    declared = f"contracts = {contracts!r}\n" if contracts is not None else ""
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f"{HEADER}{declared}\ndef upgrade() -> None:\n{lines}"


@pytest.mark.parametrize(
    ("body", "contracts", "expected"),
    [
        ('op.drop_column("calls", "model")', None, "contracts declares []"),
        ('op.drop_column("calls", "model")', ("calls.model",), "still in the previous release"),
        ('op.drop_table("teams")', ("teams",), "still in the previous release"),
        ('op.rename_table("teams", "groups")', ("teams",), "still in the previous release"),
        (
            'op.alter_column("calls", "model", new_column_name="model_name")',
            ("calls.model",),
            "still in the previous release",
        ),
        ('op.alter_column("calls", "feature", nullable=False)', None, "contracts declares"),
        (
            'with op.batch_alter_table("calls") as batch:\n    batch.drop_column("model")',
            None,
            "upgrade() contracts ['calls.model']",
        ),
        ('op.execute("ALTER TABLE calls DROP COLUMN model")', None, "contracting SQL"),
        (
            'op.add_column("calls", sa.Column("tier", sa.Integer(), nullable=False))',
            None,
            "NOT NULL without a server_default",
        ),
        ('op.add_column("calls", tier_column())', None, "give sa.Column(...) literally"),
        ('op.drop_column(TABLE, "model")', ("?.model",), "name tables and columns literally"),
    ],
)
def test_contracting_the_previous_releases_schema_is_refused(
    body: str,
    contracts: tuple[str, ...] | None,
    expected: str,
    previous_columns: dict[str, list[str]],
) -> None:
    found = problems(_upgrade(body, contracts), previous_columns)
    assert any(expected in problem for problem in found), found


@pytest.mark.parametrize(
    ("body", "contracts"),
    [
        ('op.add_column("calls", sa.Column("tier", sa.Integer(), nullable=True))', None),
        ('op.add_column("calls", sa.Column("tier", sa.Integer()))', None),
        (
            'op.add_column("calls", sa.Column("tier", sa.Integer(), nullable=False, '
            'server_default="0"))',
            None,
        ),
        ('op.create_index("ix_calls_model", "calls", ["model"])', None),
        ('op.alter_column("calls", "feature", comment="what the client said")', None),
        ('op.execute("UPDATE usage_rollup_periods SET dirty = true")', None),
        # Gone from the previous release's models: its code no longer reads them.
        ('op.drop_column("calls", "legacy_flag")', ("calls.legacy_flag",)),
        ('op.drop_table("old_exports")', ("old_exports",)),
    ],
)
def test_expanding_and_contracting_what_nobody_reads_pass(
    body: str, contracts: tuple[str, ...] | None, previous_columns: dict[str, list[str]]
) -> None:
    assert problems(_upgrade(body, contracts), previous_columns) == []
