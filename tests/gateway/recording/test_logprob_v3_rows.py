"""v3 rows: the same reads as v1 and v2 rows of the same record; every other case stored as v2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from bench.recording.records import RecordFactory, realistic_logprobs
from evals.divergence.first_divergence import first_divergence
from evals.divergence.traces import SampleTrace
from gateway.config import LogprobVocabConfig, RedactionConfig
from gateway.metering.record import CallRecord
from gateway.recording.logprob_v3_rows import V3Rows
from gateway.recording.logprob_vocab import Vocabulary
from gateway.recording.rows import call_row
from gateway.recording.sink_stats import SinkStats
from gateway.recording.stored_text import RedactionPolicy
from plumbline import logprob_packing, logprob_read, logprob_v3
from plumbline.db import create_db_engine
from plumbline.models import LogprobVocab
from tests.plumbline.test_logprob_columns import entry
from tests.support.databases import count_rows, sqlite_database
from tests.support.logprob_match import chat_entries_match
from tests.support.records import make_record

POLICY = RedactionPolicy(RedactionConfig())


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with sqlite_database(tmp_path_factory.mktemp("vocab")) as url:
        yield url


@pytest.fixture(scope="module")
def engine(database: str) -> Iterator[Engine]:
    made = create_db_engine(database)
    yield made
    made.dispose()


def _v3(engine: Engine, **bounds: Any) -> V3Rows:
    return V3Rows(Vocabulary(engine, LogprobVocabConfig(**bounds)), SinkStats())


def _read(engine: Engine, row: dict[str, Any]) -> dict[int, Any]:
    with engine.connect() as connection:
        return logprob_read.read_rows(connection, [(row["payload"], row.get("topk"))])[0]


def _rows(record: CallRecord, form: str, v3: V3Rows | None = None) -> tuple[dict[str, Any], Any]:
    call, logprobs = call_row(record, POLICY, form, v3)  # type: ignore[arg-type]
    assert logprobs is not None
    return call, logprobs


def test_v1_v2_and_v3_rows_of_the_same_records_read_the_same(engine: Engine) -> None:
    records = RecordFactory(realistic_logprobs(3)).records(3, logprobs=True)
    records.append(make_record(tokens=40, k=3))  # float64 values, one choice
    v3 = _v3(engine)
    for record in records:
        (c1, l1), (c2, l2), (c3, l3) = (_rows(record, f, v3) for f in ("v1", "v2", "v3"))
        assert l3["payload"][:4] == logprob_v3.SAMPLED_MAGIC
        sent = logprob_read.decode(l1["payload"])
        assert chat_entries_match(_read(engine, l3)[0], sent[0])
        assert chat_entries_match(logprob_read.decode(l2["payload"], l2["topk"])[0], sent[0])
        assert l3["token_count"] == l1["token_count"] == l2["token_count"]
        summary = ("logprob_mean", "logprob_min_margin", "near_ties")
        assert [c3[k] for k in summary] == [c2[k] for k in summary]
        assert c3["logprob_mean"] == pytest.approx(c1["logprob_mean"])
        if record.logprob_k == 5:  # a realistic record: fewer bytes than v2 (not the toy one)
            assert len(l3["payload"]) + len(l3["topk"]) < len(l2["payload"]) + len(l2["topk"])
    assert sum(v for k, v in vars_of(v3).items() if k.startswith("logprob_v3")) == 0


def vars_of(v3: V3Rows) -> dict[str, int]:
    stats = v3.stats  # the counters the sink reports
    return {k: getattr(stats, k) for k in stats.__slots__ if k.startswith("logprob_v3")}


def _tokens(texts: list[str]) -> list[tuple[int, bytes]]:
    entries = [
        {
            "token": t,
            "logprob": -0.5,
            "bytes": list(t.encode()),
            "top_logprobs": [{"token": t, "logprob": -0.5, "bytes": list(t.encode())}],
        }
        for t in texts
    ]
    return [(0, orjson.dumps(e)) for e in entries]


def test_a_secret_in_the_sampled_text_is_masked_in_v2_and_never_interned(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        v3 = _v3(engine)
        texts = [" write", " to", " bob", ".sm", "ith", "@", "example", ".com", " today"]
        record = make_record(tokens=0, logprob_chunks=_tokens(texts))
        _, row = _rows(record, "v3", v3)
        assert row["payload"][:4] == logprob_packing.SAMPLED_MAGIC
        stored = logprob_read.decode(row["payload"], row["topk"])[0]
        assert "example" not in "".join(e["token"] for e in stored)
        assert vars_of(v3)["logprob_v3_fallback_redacted"] == 1
        assert count_rows(url, LogprobVocab) == 0
        engine.dispose()


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (b'{"token":"a","logprob":0,"bytes":[97],"top_logprobs":[]}', "layout"),
        (b'{"token": "a","logprob":-1.0,"bytes":[97],"top_logprobs":[]}', "layout"),
        (b'{"token":"a","logprob":-1.0,"bytes":[97],"top_logprobs":[],"x":1}', "layout"),
        (
            b'{"token":"' + b"a" * 300 + b'","logprob":-1.0,"bytes":[97],"top_logprobs":[]}',
            "key_length",
        ),
    ],
)
def test_other_layouts_and_bounds_are_stored_as_v2_and_counted(
    engine: Engine, item: bytes, reason: str
) -> None:
    v3 = _v3(engine)
    record = make_record(tokens=0, logprob_chunks=[(0, item)])
    _, row = _rows(record, "v3", v3)
    assert row["payload"][:4] == logprob_packing.SAMPLED_MAGIC
    assert logprob_read.decode(row["payload"], row.get("topk")) == {0: [orjson.loads(item)]}
    assert vars_of(v3)[f"logprob_v3_fallback_{reason}"] == 1


def test_too_many_new_keys_in_one_record_is_stored_as_v2(engine: Engine) -> None:
    v3 = _v3(engine, max_new_keys_per_record=10)
    record = make_record(tokens=0, logprob_chunks=_tokens([f" new{i}" for i in range(11)]))
    _, row = _rows(record, "v3", v3)
    assert row["payload"][:4] == logprob_packing.SAMPLED_MAGIC
    assert vars_of(v3)["logprob_v3_fallback_new_keys"] == 1


def test_completions_stay_v2(engine: Engine) -> None:
    chunk = orjson.dumps(
        {
            "text_offset": [0],
            "token_logprobs": [-0.5],
            "tokens": ["a"],
            "top_logprobs": [{"a": -0.5}],
        }
    )
    record = make_record(tokens=0, logprob_format="completion", logprob_chunks=[(0, chunk)])
    _, row = _rows(record, "v3", _v3(engine))
    assert row["payload"][:4] == logprob_packing.SAMPLED_MAGIC


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.integers(0, 6).flatmap(lambda k: st.lists(entry(k), min_size=1, max_size=20)))
def test_whatever_a_backend_sends_reads_back_as_v1_would(
    engine: Engine, entries: list[Any]
) -> None:
    record = make_record(tokens=0, logprob_chunks=[(0, orjson.dumps(e)) for e in entries])
    _, v1 = _rows(record, "v1")
    _, v3 = _rows(record, "v3", _v3(engine))
    sent = logprob_read.decode(v1["payload"])[0]
    stored = _read(engine, v3)[0]
    assert chat_entries_match(stored, sent)


def test_tokens_that_are_not_utf8_are_never_interned(tmp_path: Path) -> None:
    with sqlite_database(tmp_path) as url:
        engine = create_db_engine(url)
        v3 = _v3(engine)
        item = b'{"token":"\xff","logprob":-1.0,"bytes":[255],"top_logprobs":[]}'
        # No redaction: the vocabulary's own check refuses the key (v1 keeps the bytes as sent).
        _, row = call_row(make_record(tokens=0, logprob_chunks=[(0, item)]), None, "v3", v3)
        assert row is not None and not logprob_read.is_v3(row["payload"])
        assert vars_of(v3)["logprob_v3_fallback_layout"] == 1
        assert count_rows(url, LogprobVocab) == 0
        engine.dispose()


def test_divergence_analysis_reads_v3_rows_as_v1_rows(engine: Engine) -> None:
    records = RecordFactory(realistic_logprobs(4)).records(4, logprobs=True)
    v3 = _v3(engine)
    answers = ["A", "A", "B", "B"]
    reports = []
    for form in ("v1", "v3"):
        rows = [_rows(record, form, v3)[1] for record in records]
        with engine.connect() as connection:
            read = logprob_read.read_rows(connection, [(r["payload"], r.get("topk")) for r in rows])
        traces = [
            SampleTrace.from_chat_logprobs(choices[0], answer, str(i))
            for i, (choices, answer) in enumerate(zip(read, answers, strict=True))
        ]
        reports.append(first_divergence(traces))
    v1_report, v3_report = reports
    assert v1_report is not None and v3_report is not None and v1_report.branches
    assert (v3_report.position, v3_report.prefix, v3_report.verdict) == (
        v1_report.position,
        v1_report.prefix,
        v1_report.verdict,
    )
    assert [b.token for b in v3_report.branches] == [b.token for b in v1_report.branches]
    assert v3_report.margin == pytest.approx(v1_report.margin, abs=0.002)  # 0.001 nats at most
