"""Parse YAML keeping node positions, so validation errors can name the line of a field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import yaml

from evals.suite.errors import SuiteError, SuiteProblem

DOCUMENT = "(document)"
# Nodes a suite may expand to, aliases counted at every use: a handful of nested anchors
# ("billion laughs") would otherwise expand to billions.
MAX_NODES = 200_000


@dataclass(frozen=True, slots=True)
class PositionedYaml:
    """The parsed data and its node tree."""

    data: object
    root: yaml.Node | None


def parse_positioned(text: str) -> PositionedYaml:
    """Parse one YAML document, rejecting duplicate keys; errors carry the line."""
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _reject_duplicate_keys(root)
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        raise SuiteError([SuiteProblem(line, DOCUMENT, f"invalid YAML: {problem}")]) from exc
    except yaml.YAMLError as exc:
        raise SuiteError([SuiteProblem(None, DOCUMENT, f"invalid YAML: {exc}")]) from exc
    except RecursionError:
        raise SuiteError(
            [SuiteProblem(None, DOCUMENT, "invalid YAML: nested too deeply")]
        ) from None
    finally:
        loader.dispose()
    return PositionedYaml(data, root)


def _problem(node: yaml.Node, message: str) -> SuiteError:
    return SuiteError([SuiteProblem(node.start_mark.line + 1, DOCUMENT, message)])


def _reject_duplicate_keys(root: yaml.Node) -> None:
    """Walk the node graph (aliases are shared nodes), refusing duplicate keys, alias cycles
    and documents that expand beyond MAX_NODES."""
    visited = 0
    # (node, ids of the collections on the path to it): a node on its own path is a cycle.
    stack: list[tuple[yaml.Node, frozenset[int]]] = [(root, frozenset())]
    while stack:
        node, path = stack.pop()
        visited += 1
        if visited > MAX_NODES:
            raise _problem(node, f"the document expands to more than {MAX_NODES} nodes (aliases?)")
        if not isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            continue
        if id(node) in path:
            raise _problem(node, "an alias refers to a node that contains it")
        inner = path | {id(node)}
        if isinstance(node, yaml.SequenceNode):
            stack.extend((item, inner) for item in node.value)
            continue
        seen: set[object] = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    raise _problem(key, f"duplicate key {key.value!r}")
                seen.add(key.value)
            stack.append((value, inner))


def locate(
    root: yaml.Node | None, data: object, loc: Sequence[int | str]
) -> tuple[int | None, str]:
    """The line and display path of a validation error location.

    Parts absent from the data but followed by more parts are union tags that pydantic inserts
    (`answer.regex.pattern` is `answer.pattern` in the YAML), so they are skipped.
    """
    node, value = root, data
    line = node.start_mark.line + 1 if node is not None else None
    parts: list[str] = []
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(value, dict) and part not in value and not last:
            continue
        parts.append(f"[{part}]" if isinstance(part, int) else ("." if parts else "") + str(part))
        child = _child(node, part)
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        else:
            value = None
        if child is not None:
            node, line = child, child.start_mark.line + 1
        elif root is not None:
            break
    return line, "".join(parts) or DOCUMENT


def _child(node: yaml.Node | None, part: int | str) -> yaml.Node | None:
    if node is None:
        return None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == str(part):
                return value if isinstance(value, yaml.Node) else None
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        child = node.value[part]
        return child if isinstance(child, yaml.Node) else None
    return None
