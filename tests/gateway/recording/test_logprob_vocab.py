"""The logprob vocabulary: ids agreed through the database, every bound explicit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from gateway.config import LogprobVocabConfig
from gateway.recording.logprob_vocab import Fallback, Vocabulary
from plumbline.db import create_db_engine
from plumbline.models import LogprobVocab
from plumbline.repositories import logprob_vocab
from tests.support.databases import count_rows, postgres_database, sqlite_database

DOWN_URL = "postgresql://postgres@127.0.0.1:1/plumbline_down"


@pytest.fixture(params=["postgres", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "postgres":
        with postgres_database() as url:
            yield url
    else:
        with sqlite_database(tmp_path) as url:
            yield url


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    made = create_db_engine(database_url)
    yield made
    made.dispose()


def _keys(prefix: str, count: int) -> list[bytes]:
    return [f"{prefix}{i}\x00[{i % 256}]".encode() for i in range(count)]


def test_two_recorders_give_each_key_the_same_id(engine: Engine, database_url: str) -> None:
    first, second = (
        Vocabulary(engine, LogprobVocabConfig()),
        Vocabulary(engine, LogprobVocabConfig()),
    )
    keys = _keys(" t", 300)
    ids = first.ids(keys)
    assert len(set(ids.tolist())) == 300
    assert second.ids(list(reversed(keys))).tolist() == list(reversed(ids.tolist()))
    assert first.ids(keys + keys[:5]).tolist() == ids.tolist() + ids[:5].tolist()
    assert count_rows(database_url, LogprobVocab) == 300
    with engine.connect() as connection:
        assert logprob_vocab.keys_of(connection, ids[:3].tolist()) == dict(
            zip(ids[:3].tolist(), keys[:3], strict=True)
        )


def test_recorders_assigning_at_once_agree(engine: Engine, database_url: str) -> None:
    keys = _keys(" shared", 800)
    found: list[list[int]] = []
    start = threading.Barrier(4)

    def assign(order: list[bytes]) -> None:
        vocabulary = Vocabulary(engine, LogprobVocabConfig())
        start.wait()
        ids = dict(zip(order, vocabulary.ids(order).tolist(), strict=True))
        found.append([ids[k] for k in keys])

    orders = [keys, keys[::-1], keys[400:] + keys[:400], keys[::2] + keys[1::2]]
    threads = [threading.Thread(target=assign, args=(order,)) for order in orders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 4 and all(ids == found[0] for ids in found)
    assert count_rows(database_url, LogprobVocab) == 800


def test_each_bound_falls_back_and_adds_nothing(engine: Engine, database_url: str) -> None:
    bounds = LogprobVocabConfig(max_key_bytes=32, max_rows=100, max_new_keys_per_record=50)
    vocabulary = Vocabulary(engine, bounds)
    with pytest.raises(Fallback) as long_key:
        vocabulary.ids([b"x" * 33])
    assert long_key.value.reason == "key_length"
    with pytest.raises(Fallback) as many:
        vocabulary.ids(_keys("a", 51))
    assert many.value.reason == "new_keys"
    assert count_rows(database_url, LogprobVocab) == 0
    known = vocabulary.ids(_keys("a", 50))
    vocabulary.ids(_keys("b", 50))
    with pytest.raises(Fallback) as full:
        vocabulary.ids(_keys("c", 1))
    assert full.value.reason == "vocab_full"
    assert count_rows(database_url, LogprobVocab) == 100
    # Known keys still get their ids, from a fresh cache too: the bounds are on what is added.
    assert vocabulary.ids(_keys("a", 50)).tolist() == known.tolist()
    assert Vocabulary(engine, bounds).ids(_keys("a", 50) + _keys("b", 50)).size == 100
    # Keys a recorder does not know are looked up at most 8 per key it may add.
    lookups = LogprobVocabConfig(max_new_keys_per_record=10)
    assert Vocabulary(engine, lookups).ids(_keys("a", 50) + _keys("b", 30)).size == 80
    with pytest.raises(Fallback) as looked_up:
        Vocabulary(engine, lookups).ids(_keys("a", 50) + _keys("b", 31))
    assert looked_up.value.reason == "new_keys"


def test_the_cache_is_bounded_and_refills_from_the_database(engine: Engine) -> None:
    vocabulary = Vocabulary(engine, LogprobVocabConfig(cache_keys=100))
    first = vocabulary.ids(_keys("a", 60))
    vocabulary.ids(_keys("b", 60))
    assert vocabulary.cached <= 100
    assert vocabulary.ids(_keys("a", 60)).tolist() == first.tolist()


def test_a_database_that_is_away_falls_back_then_waits_before_trying_again() -> None:
    down = create_db_engine(DOWN_URL)
    try:
        vocabulary = Vocabulary(down, LogprobVocabConfig())
        for _ in range(2):
            with pytest.raises(Fallback) as away:
                vocabulary.ids(_keys("a", 3))
            assert away.value.reason == "database"
        assert vocabulary.cached == 0
    finally:
        down.dispose()


def test_keys_no_read_could_decode_are_refused(engine: Engine, database_url: str) -> None:
    vocabulary = Vocabulary(engine, LogprobVocabConfig())
    for bad in (b"\xff\xfe\x00[1]", b"a\x00[1", b"no separator", b"a\x00[1]\x00[2]"):
        with pytest.raises(Fallback) as refused:
            vocabulary.ids([bad])
        assert refused.value.reason == "layout"
    assert count_rows(database_url, LogprobVocab) == 0
