"""Grafana's Postgres macros and template variables, expanded the way Grafana expands them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from tests.dashboards.promql_names import grafana_regex_escape

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class TimeRange:
    """The dashboard's time picker and the interval Grafana derives from it."""

    start: datetime
    end: datetime
    interval: str = "1m"

    def literal(self, moment: datetime) -> str:
        """A timestamp as Grafana writes it into SQL."""
        return "'" + moment.strftime("%Y-%m-%dT%H:%M:%SZ") + "'"


def seconds(interval: str) -> int:
    """'5m' -> 300."""
    match = re.fullmatch(r"'?(\d+)([smhd])'?", interval.strip())
    if match is None:
        raise ValueError(f"not a Grafana interval: {interval!r}")
    return int(match.group(1)) * _UNITS[match.group(2)]


def _macro_args(sql: str, name: str) -> re.Match[str] | None:
    return re.search(rf"\$__{name}\(([^()]*(?:\([^()]*\)[^()]*)*)\)", sql)


def expand_macros(sql: str, time: TimeRange) -> str:
    """$__timeFilter, $__timeGroup(Alias), $__timeFrom/To and $__interval."""
    sql = sql.replace("$__interval", time.interval)
    sql = sql.replace("$__timeFrom()", time.literal(time.start))
    sql = sql.replace("$__timeTo()", time.literal(time.end))
    while match := _macro_args(sql, "timeFilter"):
        column = match.group(1).strip()
        between = f"{column} BETWEEN {time.literal(time.start)} AND {time.literal(time.end)}"
        sql = sql[: match.start()] + between + sql[match.end() :]
    for name, alias in (("timeGroupAlias", ' AS "time"'), ("timeGroup", "")):
        while match := _macro_args(sql, name):
            column, interval = (part.strip() for part in match.group(1).rsplit(",", 1))
            step = seconds(interval)
            group = f"floor(extract(epoch from {column})/{step})*{step}{alias}"
            sql = sql[: match.start()] + group + sql[match.end() :]
    return sql


def sql_string(value: str) -> str:
    """A value in single quotes with quotes doubled (Grafana's `sqlstring` format)."""
    return "'" + value.replace("'", "''") + "'"


def expand_variables(sql: str, selections: Mapping[str, list[str] | str]) -> str:
    """Replace ${name:sqlstring} and ${name:regex}; a str selection is an "All" allValue."""
    for name, selection in selections.items():
        if isinstance(selection, str):
            as_sql, as_regex = sql_string(selection), selection
        else:
            as_sql = ",".join(sql_string(v) for v in selection)
            escaped = [grafana_regex_escape(v) for v in selection]
            as_regex = escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
        sql = sql.replace(f"${{{name}:sqlstring}}", as_sql)
        sql = sql.replace(f"${{{name}:regex}}", as_regex)
    return sql


def expand(sql: str, time: TimeRange, selections: Mapping[str, list[str] | str]) -> str:
    """The SQL Grafana would send; any variable or macro left over is an error."""
    expanded = expand_macros(expand_variables(sql, selections), time)
    if re.search(r"\$(\{|__|[A-Za-z_])", expanded):
        raise ValueError(f"unexpanded Grafana macro or variable in:\n{expanded}")
    return expanded
