"""Load a suite from YAML text (or a mapping) into a validated `Suite`, or explain why not."""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from evals.answers import ANSWER_TYPES
from evals.suite.checks import cross_checks
from evals.suite.errors import SuiteError, SuiteProblem
from evals.suite.schema import Suite
from evals.suite.yaml_positions import DOCUMENT, locate, parse_positioned

Location = tuple[int | str, ...]


def load_suite(text: str) -> Suite:
    """Parse and validate suite YAML; raises SuiteError naming line and field path."""
    parsed = parse_positioned(text)
    if not isinstance(parsed.data, dict):
        line = parsed.root.start_mark.line + 1 if parsed.root is not None else 1
        raise SuiteError([SuiteProblem(line, DOCUMENT, "a suite must be a YAML mapping")])
    return _validate(parsed.data, parsed.root)


def suite_from_data(data: dict[str, Any]) -> Suite:
    """Validate a suite given as a mapping (e.g. a JSON API body); errors name the field path."""
    return _validate(data, None)


def _validate(data: dict[str, Any], root: yaml.Node | None) -> Suite:
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A tuple whose items failed also reports "too short"; the item errors say why.
        errors = [e for e in errors if not (e["type"] == "too_short" and _has_inner(e, errors))]
        raise SuiteError([_problem(error, data, root) for error in errors]) from exc
    problems = [
        SuiteProblem(*locate(root, data, loc), message) for loc, message in cross_checks(suite)
    ]
    if problems:
        raise SuiteError(problems)
    if suite.greedy and "temperature" not in suite.sampling.model_fields_set:
        suite = suite.model_copy(
            update={"sampling": suite.sampling.model_copy(update={"temperature": 0.0})}
        )
    return suite


def _problem(error: ErrorDetails, data: dict[str, Any], root: yaml.Node | None) -> SuiteProblem:
    loc: Location = tuple(error["loc"])
    message = error["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    kind = error["type"]
    if kind == "union_tag_invalid":
        loc = (*loc, "type")
        given = error["input"].get("type") if isinstance(error["input"], dict) else None
        message = f"unknown answer type {given!r} (expected one of: {', '.join(ANSWER_TYPES)})"
    elif kind == "union_tag_not_found":
        message = f"answer type missing: add `type:` (one of: {', '.join(ANSWER_TYPES)})"
    elif kind == "extra_forbidden":
        message = "unknown field"
    elif kind == "missing":
        message = "required field missing"
    line, path = locate(root, data, loc)
    return SuiteProblem(line, path, message)


def _has_inner(error: ErrorDetails, errors: list[ErrorDetails]) -> bool:
    loc = tuple(error["loc"])
    return any(len(e["loc"]) > len(loc) and tuple(e["loc"][: len(loc)]) == loc for e in errors)
