"""Expand before contract: what a migration may do while the previous release still runs.

During a rolling deploy the schema is at the new head while replicas of the previous release
still read and write it. So a migration that lands in a release may add (tables, nullable or
defaulted columns, indexes) but may contract (drop or rename a table or column, tighten a column
to NOT NULL or change its type) only what the previous release's models no longer have, and only
when it says so: a module-level `contracts = ("table", "table.column", ...)` that lists exactly
what its `upgrade()` contracts. Contracting SQL in `op.execute` is refused outright (use the op,
so this check can see it). The rule in words: docs/operations.md, "Rolling upgrades".
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

CONTRACT_SQL = re.compile(
    r"\b(DROP\s+(TABLE|COLUMN)|RENAME\s+(TO|COLUMN)|SET\s+NOT\s+NULL|TYPE\s+\w+)", re.IGNORECASE
)
UNKNOWN = "?"


def _text(node: ast.expr | None) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else UNKNOWN


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    return call.args[index] if len(call.args) > index else _keyword(call, name)


def _is_false(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _upgrade(tree: ast.Module) -> ast.FunctionDef:
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "upgrade"]
    assert len(found) == 1, "a migration has one upgrade()"
    return found[0]


def _assignments(tree: ast.Module) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of each module-level assignment."""
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                yield node.target.id, node.value


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level string constants (SQL kept apart from upgrade())."""
    return {
        name: value.value
        for name, value in _assignments(tree)
        if isinstance(value, ast.Constant) and isinstance(value.value, str)
    }


def declared_contracts(tree: ast.Module) -> set[str]:
    """What the module's `contracts` tuple declares (empty if it has none)."""
    for name, value in _assignments(tree):
        if name == "contracts":
            assert isinstance(value, ast.Tuple | ast.List), "contracts is a tuple of strings"
            return {_text(item) for item in value.elts}
    return set()


def _batch_tables(function: ast.FunctionDef) -> dict[str, str]:
    """Names bound by `with op.batch_alter_table("t") as name` -> the table."""
    found = {}
    for node in ast.walk(function):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "batch_alter_table"
                    and isinstance(item.optional_vars, ast.Name)
                ):
                    found[item.optional_vars.id] = _text(_arg(call, 0, "table_name"))
    return found


def _operations(function: ast.FunctionDef) -> Iterator[tuple[str, str | None, ast.Call]]:
    """(operation, batch table or None, call) for each `op.x(...)` or `batch.x(...)`."""
    batches = _batch_tables(function)
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "op":
                yield node.func.attr, None, node
            elif isinstance(owner, ast.Name) and owner.id in batches:
                yield node.func.attr, batches[owner.id], node


def _shift(call: ast.Call, batch_table: str | None) -> tuple[str, int]:
    """The table and where the column argument is: batch ops take no table argument."""
    if batch_table is not None:
        return batch_table, 0
    return _text(_arg(call, 0, "table_name")), 1


def _contract_target(name: str, batch_table: str | None, call: ast.Call) -> str | None:
    if name == "drop_table":
        return _text(_arg(call, 0, "table_name"))
    if name == "rename_table":
        return _text(_arg(call, 0, "old_table_name"))
    if name in ("drop_column", "alter_column"):
        table, at = _shift(call, batch_table)
        column = _text(_arg(call, at, "column_name"))
        if name == "alter_column" and not (
            _keyword(call, "new_column_name") is not None
            or _keyword(call, "type_") is not None
            or _is_false(_keyword(call, "nullable"))
        ):
            return None
        return f"{table}.{column}"
    return None


def _added_column_problem(call: ast.Call, batch_table: str | None) -> str | None:
    table, at = _shift(call, batch_table)
    column = _arg(call, at, "column")
    if not (
        isinstance(column, ast.Call)
        and isinstance(column.func, ast.Attribute | ast.Name)
        and (column.func.attr if isinstance(column.func, ast.Attribute) else column.func.id)
        == "Column"
    ):
        return f"add_column on {table}: give sa.Column(...) literally so it can be checked"
    if _is_false(_keyword(column, "nullable")) and _keyword(column, "server_default") is None:
        name = _text(column.args[0] if column.args else None)
        return (
            f"{table}.{name} is added NOT NULL without a server_default: the previous "
            "release's inserts, which do not know it, would fail"
        )
    return None


def contracts_in(source: str) -> set[str]:
    """What `upgrade()` drops, renames, tightens or retypes ("table" or "table.column")."""
    upgrade = _upgrade(ast.parse(source))
    found = set()
    for name, batch_table, call in _operations(upgrade):
        target = _contract_target(name, batch_table, call)
        if target is not None:
            found.add(target)
    return found


def problems(source: str, previous_columns: dict[str, list[str]]) -> list[str]:
    """Why this migration may not land while the release with `previous_columns` runs."""
    tree = ast.parse(source)
    upgrade = _upgrade(tree)
    constants = _constants(tree)
    found: list[str] = []
    for name, batch_table, call in _operations(upgrade):
        if name == "add_column":
            problem = _added_column_problem(call, batch_table)
            if problem is not None:
                found.append(problem)
        if name == "execute":
            texts = [n.value for n in ast.walk(call) if isinstance(n, ast.Constant)]
            texts += [constants.get(n.id, "") for n in ast.walk(call) if isinstance(n, ast.Name)]
            for text in texts:
                if isinstance(text, str) and CONTRACT_SQL.search(text):
                    found.append(f"contracting SQL in op.execute: {text.strip()[:60]!r}")
    contracted, declared = contracts_in(source), declared_contracts(tree)
    if UNKNOWN in " ".join(contracted):
        found.append(f"name tables and columns literally in what upgrade() contracts: {contracted}")
    if contracted != declared:
        found.append(
            f"contracts declares {sorted(declared)}, upgrade() contracts {sorted(contracted)}"
        )
    for target in sorted(contracted):
        table, _, column = target.partition(".")
        still_read = table in previous_columns and (not column or column in previous_columns[table])
        if still_read:
            found.append(
                f"{target} is still in the previous release's models: contract it in the "
                "release after the one whose code stopped using it"
            )
    return found
