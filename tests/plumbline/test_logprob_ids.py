"""The fused scan gives the ids a dict lookup of scan_chat's keys gives, compiled or reference."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.recording.records import realistic_logprobs, simulator_logprobs
from plumbline._logprob_scan import KeyTable
from plumbline.logprob_ids import (
    ReferenceKeyTable,
    ScannedIds,
    key_table,
    scan_ids,
    scan_ids_reference,
)
from plumbline.logprob_scan import SEPARATOR, scan_chat_reference
from tests.plumbline.test_logprob_scan import chunks, entry

MAX_KEY = 64


def _tables(known: list[bytes], capacity: int = 10_000) -> tuple[KeyTable, ReferenceKeyTable]:
    compiled = KeyTable(capacity, MAX_KEY, os.urandom(16))
    reference = ReferenceKeyTable(capacity, MAX_KEY)
    storable = [key for key in dict.fromkeys(known) if len(key) <= MAX_KEY][:capacity]
    for table in (compiled, reference):
        table.add(storable, [7 * i + 3 for i in range(len(storable))])
    return compiled, reference


def _same(left: ScannedIds | None, right: ScannedIds | None) -> bool:
    if left is None or right is None:
        return left is right
    return (
        left.ids.tolist() == right.ids.tolist()
        and left.alt_ids.tolist() == right.alt_ids.tolist()
        and left.logprobs.tobytes() == right.logprobs.tobytes()
        and left.alt_logprobs.tobytes() == right.alt_logprobs.tobytes()
        and left.alt_counts.tolist() == right.alt_counts.tolist()
        and left.missing == right.missing
        and left.text == right.text
        and left.escaped is right.escaped
    )


def _ids_by_dict(items: list[bytes], table: ReferenceKeyTable) -> tuple[list[int], list[int]]:
    """Each key's id as a dict lookup of scan_chat's keys gives it, after resolving the missing."""
    scanned = scan_chat_reference(items)
    assert scanned is not None
    given_out = {key: 1_000_000 + i for i, key in enumerate(scanned.keys + scanned.alt_keys)}

    def id_of(key: bytes) -> int:
        found = table.get(key)
        return given_out[key] if found is None else found

    return [id_of(k) for k in scanned.keys], [id_of(k) for k in scanned.alt_keys]


def _resolve(found: ScannedIds, items: list[bytes]) -> ScannedIds:
    scanned = scan_chat_reference(items)
    assert scanned is not None
    given_out = {key: 1_000_000 + i for i, key in enumerate(scanned.keys + scanned.alt_keys)}
    return found.with_missing(np.array([given_out[key] for key in found.missing], np.int64))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks, st.integers(0, 100))
def test_generated_entries_give_the_same_ids_compiled_and_reference(
    items: list[bytes], percent_known: int
) -> None:
    scanned = scan_chat_reference(items)
    keys = [] if scanned is None else scanned.keys + scanned.alt_keys
    known = [key for i, key in enumerate(keys) if (i * 37) % 100 < percent_known]
    compiled, reference = _tables(known)
    found, expected = scan_ids(items, compiled), scan_ids_reference(items, reference)
    assert _same(found, expected)
    if found is None:
        return
    done = _resolve(found, items)
    assert (done.ids.tolist(), done.alt_ids.tolist()) == _ids_by_dict(items, reference)
    tokens = [key.split(SEPARATOR, 1)[0] for key in scanned.keys] if scanned else []
    assert found.text == b"".join(tokens)


@settings(max_examples=300, deadline=None)
@given(entry(), st.lists(st.tuples(st.integers(0, 400), st.binary(max_size=3)), max_size=4))
def test_mutated_entries_are_read_alike_or_refused_alike(
    valid: bytes, edits: list[tuple[int, bytes]]
) -> None:
    mutated = valid
    for at, replacement in edits:
        at %= len(mutated) + 1
        mutated = mutated[:at] + replacement + mutated[at + len(replacement) // 2 :]
    compiled, reference = _tables([])
    assert _same(scan_ids([mutated], compiled), scan_ids_reference([mutated], reference))


def test_records_like_a_real_model_and_the_simulator_read_alike() -> None:
    for items in [*realistic_logprobs(3), *simulator_logprobs(2, tokens=40)]:
        scanned = scan_chat_reference(items)
        assert scanned is not None
        half = (scanned.keys + scanned.alt_keys)[::2]
        compiled, reference = _tables(half)
        found = scan_ids(items, compiled)
        assert found is not None and _same(found, scan_ids_reference(items, reference))
        assert len(found.missing) == len(set(found.missing))  # each missing key once
        assert found.positions == scanned.positions
        done = _resolve(found, items)
        assert (done.ids.tolist(), done.alt_ids.tolist()) == _ids_by_dict(items, reference)


def test_keys_too_long_for_the_table_are_missing_every_time() -> None:
    long_token = b"x" * (MAX_KEY + 1)
    item = (
        b'{"token":"' + long_token + b'","logprob":-0.5,"bytes":null,"top_logprobs":['
        b'{"token":"' + long_token + b'","logprob":-0.5,"bytes":null},'
        b'{"token":"y' + long_token + b'","logprob":-0.7,"bytes":null}]}'
    )
    compiled, reference = _tables([])
    found = scan_ids([item, item], compiled)
    assert found is not None and _same(found, scan_ids_reference([item, item], reference))
    # The alternative that is the sampled token shares its place; the others are listed again.
    assert found.ids.tolist() == [-1, -3] and found.alt_ids.tolist() == [-1, -2, -3, -4]
    key, other = long_token + SEPARATOR + b"null", b"y" + long_token + SEPARATOR + b"null"
    assert found.missing == [key, other, key, other]


@pytest.mark.parametrize("make", [lambda n: KeyTable(n, MAX_KEY, os.urandom(16)), None])
def test_a_table_holds_at_most_its_capacity_and_only_keys_it_can_find(make: object) -> None:
    table = make(3) if callable(make) else ReferenceKeyTable(3, MAX_KEY)
    keys = [b"a\x00null", b"b\x00[98]", b"c\x00null"]
    table.add(keys, [1, 2, 3])
    table.add([keys[0]], [1])  # a key already held takes no room
    assert len(table) == 3 and table.get(b"b\x00[98]") == 2 and table.get(b"d\x00null") is None
    for bad_keys, bad_ids in (
        ([b"d\x00null"], [4]),  # full
        ([b"no separator"], [4]),
        ([b"x" * MAX_KEY + b"\x00null"], [4]),
        ([b"e\x00null"], [-1]),
        ([b"e\x00null"], [1, 2]),
    ):
        with pytest.raises(ValueError, match=r"key|ids|full"):
            table.add(bad_keys, bad_ids)
    ids, missing = table.lookup([keys[2], b"z\x00null", keys[0], b"z\x00null"])
    assert np.frombuffer(ids, np.int64).tolist() == [3, -1, 1, -2]
    assert missing == [b"z\x00null", b"z\x00null"]
    table.clear()
    assert len(table) == 0 and table.get(keys[0]) is None
    table.add([b"d\x00null"], [4])
    assert table.get(b"d\x00null") == 4


def test_the_compiled_table_keeps_many_keys_and_refuses_bad_arguments() -> None:
    table = key_table(200_000, 256)
    assert isinstance(table, KeyTable)
    keys = [f"t{i}\x00[{i % 256}]".encode() for i in range(150_000)]
    table.add(keys, list(range(150_000)))  # grows its slots many times over
    ids, missing = table.lookup(keys[::1000])
    assert np.frombuffer(ids, np.int64).tolist() == list(range(0, 150_000, 1000)) and not missing
    for bad in ((0, 16, os.urandom(16)), (10, 2000, os.urandom(16)), (10, 16, b"short")):
        with pytest.raises(ValueError, match="KeyTable needs"):
            KeyTable(*bad)
    with pytest.raises(TypeError):
        table.add([b"a\x00null"], [True])


def test_keys_short_and_long_are_found_after_the_table_grows() -> None:
    table = KeyTable(5000, 256, os.urandom(16))
    # Up to 44 bytes a key sits in its slot; longer ones in the table's arena.
    keys = [(b"k%d" % i).ljust(20 + i % 200, b"x") + b"\x00null" for i in range(4000)]
    table.add(keys, list(range(4000)))
    ids, missing = table.lookup([*keys, b"absent\x00null"])
    assert np.frombuffer(ids, np.int64).tolist() == [*range(4000), -1]
    assert missing == [b"absent\x00null"] and len(table) == 4000
    table.clear()
    table.add(keys[-5:], [1, 2, 3, 4, 5])
    assert [table.get(key) for key in keys[-6:]] == [None, 1, 2, 3, 4, 5]
