"""Metric names in a PromQL expression, and Grafana's variables replaced as Grafana would."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
    | {"and", "or", "unless", "inf", "nan"}
)
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIER = re.compile(r"(?<![\w.:])[a-zA-Z_:][a-zA-Z0-9_:]*")

# The values Grafana gives its built-in interval variables when the tests run the queries.
BUILTINS = {"$__rate_interval": "30s", "$__range": "5m", "$__interval": "1s"}


def metric_names(expr: str) -> set[str]:
    """Names of the series an expression selects (functions, keywords and labels excluded)."""
    text = _STRINGS.sub('""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = _GROUPING.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or match.group() in KEYWORDS:
            continue
        names.add(match.group())
    return names


def grafana_regex_escape(value: str) -> str:
    """Grafana's escaping of one value for the `regex` format."""
    return re.sub(r"([\\^$*+?.()|\[\]{}/])", r"\\\1", value)


def prometheus_regex_escape(value: str) -> str:
    """The Prometheus datasource's escaping of a multi-value or All variable's value.

    Grafana escapes regex characters with a doubled backslash (the PromQL string then holds
    one) and leaves `/` alone: `/v1/chat/completions` stays as it is.
    """
    return re.sub(r"([\\^$*+?.()|\[\]{}'])", r"\\\\\1", value)


def _joined(selection: list[str], escape: Callable[[str], str]) -> str:
    if len(selection) == 1:
        return escape(selection[0])
    return "(" + "|".join(escape(v) for v in selection) + ")"


def expand_promql(expr: str, selections: Mapping[str, list[str] | str]) -> str:
    """Replace built-ins and template variables; a list is a multi-value selection."""
    for name, value in BUILTINS.items():
        expr = expr.replace(name, value)
    for name, selection in selections.items():
        if isinstance(selection, str):  # allValue of an "All" selection, used as is
            regex = plain = selection
        else:
            regex = _joined(selection, grafana_regex_escape)
            plain = _joined(selection, prometheus_regex_escape)
        expr = expr.replace(f"${{{name}:regex}}", regex).replace(f"${{{name}}}", plain)
        expr = re.sub(rf"\${name}\b", plain.replace("\\", "\\\\"), expr)  # taken literally
    if re.search(r"\$(\{|__|[A-Za-z_])", expr):
        raise ValueError(f"unexpanded Grafana variable in {expr!r}")
    return expr
