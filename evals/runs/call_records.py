"""Wait (bounded) for the gateway's log sink to write sample calls, then read their logprobs."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any, TypeVar, cast

from sqlalchemy.orm import Session, sessionmaker

from evals.divergence import LogprobsMode, SampleTrace, first_divergence
from evals.runs.repository import calls as call_repo
from evals.runs.sample_frame import KeyedRun
from plumbline.models import Call, EvalSample

LOGPROB_MODES = ("raw_logprobs", "processed_logprobs")
POLL_S = 0.1
Key = TypeVar("Key", str, tuple[str, int])


def wait_for_calls(
    sessions: sessionmaker[Session], call_ids: Collection[str], timeout_s: float
) -> dict[str, Call]:
    """The recorded calls among `call_ids`; waits up to `timeout_s` for the missing ones.

    The sink writes asynchronously (and spools while the database is away), so a call may be
    answered before its row exists; calls still missing after the wait are left out.
    """
    wanted = set(call_ids)
    found: dict[str, Call] = {}
    deadline = time.monotonic() + timeout_s
    while True:
        with sessions() as session:
            found.update(call_repo.calls_by_ids(session, wanted - set(found)))
        if len(found) == len(wanted) or time.monotonic() >= deadline:
            return found
        time.sleep(POLL_S)


def logprob_modes(calls: Collection[Call]) -> dict[str, int]:
    """How many calls each logprob mode covered ("none": the backend returned no logprobs)."""
    return dict(Counter(call.logprob_mode or "none" for call in calls))


def dominant_mode(modes: Mapping[str, int]) -> str | None:
    """The mode most calls used, or None when no call had logprobs."""
    usable = {mode: n for mode, n in modes.items() if mode != "none"}
    return max(usable, key=lambda m: (usable[m], m)) if usable else None


def divergences(
    sessions: sessionmaker[Session],
    keyed: KeyedRun,
    calls: Mapping[str, Call],
    mode: str | None,
) -> dict[str, Any]:
    """First divergent token per question whose samples disagree (needs logprobs)."""
    return _divergences(sessions, keyed.samples_by_question, keyed, calls, mode)


def paraphrase_divergences(
    sessions: sessionmaker[Session],
    keyed: KeyedRun,
    calls: Mapping[str, Call],
    mode: str | None,
) -> dict[tuple[str, int], Any]:
    """First divergent token among each paraphrase's own samples, where they disagree.

    For greedy runs: the repeated samples of one paraphrase share a prompt, so this is the
    token where identical requests parted ways.
    """
    groups: dict[tuple[str, int], list[EvalSample]] = {}
    for question, samples in keyed.samples_by_question.items():
        for sample in samples:
            groups.setdefault((question, sample.paraphrase_index), []).append(sample)
    return _divergences(sessions, groups, keyed, calls, mode)


def _divergences(
    sessions: sessionmaker[Session],
    groups: Mapping[Key, list[EvalSample]],
    keyed: KeyedRun,
    calls: Mapping[str, Call],
    mode: str | None,
) -> dict[Key, Any]:
    if mode not in LOGPROB_MODES:
        return {}
    found: dict[Key, Any] = {}
    for group, samples in groups.items():
        keys = [keyed.keys[s.id][0] for s in samples]
        if len(set(keys)) <= 1:
            continue
        wanted = [calls[s.call_id] for s in samples if s.call_id is not None and s.call_id in calls]
        with sessions() as session:
            entries = call_repo.chat_logprobs(session, wanted)
        traces = [
            SampleTrace.from_chat_logprobs(
                entries.get(s.call_id or ""), keyed.keys[s.id][0], str(s.id)
            )
            for s in samples
        ]
        report = first_divergence(traces, logprobs_mode=cast(LogprobsMode, mode))
        if report is not None:
            found[group] = report
    return found
