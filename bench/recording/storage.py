"""Bytes Postgres stores for recorded calls: every partition, its TOAST and indexes."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg


@dataclass(frozen=True)
class Stored:
    """Sizes and counts of the call tables of one database."""

    calls_bytes: int
    calls_rows: int
    logprob_bytes: int
    logprob_rows: int
    logprob_tokens: int
    vocab_rows: int = 0
    vocab_bytes: int = 0

    @property
    def bytes_per_token(self) -> float:
        """call_logprobs bytes per logged token."""
        return self.logprob_bytes / self.logprob_tokens if self.logprob_tokens else float("nan")

    @property
    def total_per_token(self) -> float:
        """calls plus call_logprobs bytes per logged token."""
        total = self.calls_bytes + self.logprob_bytes
        return total / self.logprob_tokens if self.logprob_tokens else float("nan")

    @property
    def call_row_bytes(self) -> float:
        """calls bytes (with indexes) per row."""
        return self.calls_bytes / self.calls_rows if self.calls_rows else float("nan")


def _tree_bytes(connection: psycopg.Connection, table: str) -> int:
    row = connection.execute(
        "SELECT coalesce(sum(pg_total_relation_size(relid)), 0) "
        "FROM pg_partition_tree(%s::regclass) WHERE isleaf",
        (table,),
    ).fetchone()
    assert row is not None
    return int(row[0])


def stored(url: str) -> Stored:
    """Sizes after VACUUM ANALYZE (visibility and free-space maps made, as autovacuum would)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE calls")
        connection.execute("VACUUM ANALYZE call_logprobs")
        connection.execute("VACUUM ANALYZE logprob_vocab")
        counts = connection.execute(
            "SELECT (SELECT count(*) FROM calls), (SELECT count(*) FROM call_logprobs), "
            "(SELECT coalesce(sum(token_count), 0) FROM call_logprobs), "
            "(SELECT count(*) FROM logprob_vocab), pg_total_relation_size('logprob_vocab')"
        ).fetchone()
        assert counts is not None
        return Stored(
            _tree_bytes(connection, "calls"),
            int(counts[0]),
            _tree_bytes(connection, "call_logprobs"),
            int(counts[1]),
            int(counts[2]),
            int(counts[3]),
            int(counts[4]),
        )
