"""Read the gateway's records of sample calls: the call rows and their logprobs."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import select, tuple_
from sqlalchemy.orm import Session, load_only

from plumbline import logprob_codec, logprob_read
from plumbline.models import Call, CallLogprobs

CHUNK = 500


def calls_by_ids(session: Session, call_ids: Collection[str]) -> dict[str, Call]:
    """Recorded calls by id (those the log sink has written so far).

    Only the columns scoring reads are loaded (id, created_at, logprob_mode): a call row has
    dozens, and a run has a call per sample.
    """
    found: dict[str, Call] = {}
    ids = sorted(set(call_ids))
    columns = load_only(Call.id, Call.created_at, Call.logprob_mode)
    for start in range(0, len(ids), CHUNK):
        query = select(Call).options(columns).where(Call.id.in_(ids[start : start + CHUNK]))
        found.update((call.id, call) for call in session.scalars(query))
    return found


def chat_logprobs(session: Session, calls: Collection[Call]) -> dict[str, list[dict[str, Any]]]:
    """The first choice's chat logprobs of each call that has them, decoded exactly."""
    found: dict[str, list[dict[str, Any]]] = {}
    keyed = sorted(calls, key=lambda c: c.id)
    for start in range(0, len(keyed), CHUNK):
        chunk = keyed[start : start + CHUNK]
        # Both key columns, so Postgres prunes to each call's day partition.
        keys = tuple_(CallLogprobs.call_id, CallLogprobs.created_at)
        query = select(CallLogprobs).where(keys.in_([(c.id, c.created_at) for c in chunk]))
        rows = [row for row in session.scalars(query) if row.format == logprob_codec.CHAT]
        # v3 rows name tokens by vocabulary id: one lookup for the chunk's rows together.
        decoded = logprob_read.read_rows(session, [(row.payload, row.topk) for row in rows])
        for row, choices in zip(rows, decoded, strict=True):
            entries = choices.get(0)
            if isinstance(entries, list):
                found[row.call_id] = entries
    return found
