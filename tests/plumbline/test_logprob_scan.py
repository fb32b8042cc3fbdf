"""The compiled logprob scanner and the reference give the same columns, bit for bit."""

from __future__ import annotations

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.recording.records import realistic_logprobs, simulator_logprobs
from plumbline.logprob_scan import (
    ScannedChat,
    decode_key,
    scan_chat,
    scan_chat_compiled,
    scan_chat_reference,
)

# A JSON number as the grammar allows it: many digits, big and tiny exponents, some past float64.
json_number = st.from_regex(
    r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
)
float_text = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),  # subnormals, -0.0, 1e+300
    st.floats(-60.0, 0.0, width=32).map(lambda value: repr(float(value))),  # as vLLM writes
    json_number,
    st.sampled_from(["9007199254740993", "1.000000000000000111", "2.2250738585072011e-308"]),
)
SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "/": "\\/",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


@st.composite
def json_string(draw: st.DrawFn) -> bytes:
    """A token as a JSON string's content, each character raw, short-escaped or \\u-escaped."""
    text = draw(
        st.one_of(
            st.text(st.characters(exclude_categories=["Cs"]), max_size=10),
            st.sampled_from(["bytes:\\xe2", "\U0001f600", "\x00", "\x1f", "}]", ""]),
        )
    )
    out = []
    for char in text:
        how = draw(st.integers(0, 3))
        code = ord(char)
        if how == 0 and char in SHORT_ESCAPES:
            out.append(SHORT_ESCAPES[char])
        elif (how == 1 or code < 0x20 or char in '"\\') and code > 0xFFFF:
            high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
            out.append(f"\\u{high:04x}\\u{low:04X}")
        elif how == 1 or code < 0x20 or char in '"\\':
            out.append(f"\\u{code:04x}" if how else f"\\u{code:04X}")
        else:
            out.append(char)
    return "".join(out).encode()


@st.composite
def fields(draw: st.DrawFn) -> bytes:
    """`"token":..,"logprob":..,"bytes":..` in vLLM's order."""
    raw = draw(st.one_of(st.none(), st.lists(st.integers(0, 255), max_size=6)))
    return (
        b'"token":"'
        + draw(json_string())
        + b'","logprob":'
        + draw(float_text).encode()
        + b',"bytes":'
        + orjson.dumps(raw)
    )


@st.composite
def entry(draw: st.DrawFn) -> bytes:
    """One position: the sampled token's fields and 0 to 5 alternatives."""
    alternatives = draw(st.lists(fields(), max_size=5))
    top = b",".join(b"{" + alternative + b"}" for alternative in alternatives)
    return b"{" + draw(fields()) + b',"top_logprobs":[' + top + b"]}"


chunks = st.lists(st.lists(entry(), min_size=0, max_size=3).map(b",".join), max_size=6)


def same(left: ScannedChat | None, right: ScannedChat | None) -> bool:
    """Both None, or the same keys, float bits and counts."""
    if left is None or right is None:
        return left is right
    return (
        left.keys == right.keys
        and left.alt_keys == right.alt_keys
        and left.logprobs.tobytes() == right.logprobs.tobytes()
        and left.alt_logprobs.tobytes() == right.alt_logprobs.tobytes()
        and left.alt_counts.dtype == right.alt_counts.dtype
        and left.alt_counts.tolist() == right.alt_counts.tolist()
    )


def as_json(items: list[bytes]) -> list[tuple[str, list[int] | None]]:
    """Every sampled token and alternative, in order, as orjson reads the document."""
    read = []
    for entry_ in orjson.loads(b"[" + b",".join(item for item in items if item) + b"]"):
        read.append((entry_["token"], entry_["bytes"]))
        read.extend((top["token"], top["bytes"]) for top in entry_["top_logprobs"])
    return read


def test_realistic_records_read_the_same_and_as_orjson_reads_them() -> None:
    for items in realistic_logprobs(6):
        compiled, reference = scan_chat_compiled(items), scan_chat_reference(items)
        assert compiled is not None and same(compiled, reference)
        assert compiled.positions == 200 and compiled.alt_counts.tolist() == [5] * 200
        document = orjson.loads(b"[" + b",".join(items) + b"]")
        assert compiled.logprobs.tolist() == [entry_["logprob"] for entry_ in document]
        alternatives = [top["logprob"] for entry_ in document for top in entry_["top_logprobs"]]
        assert compiled.alt_logprobs.tolist() == alternatives
        keys = [decode_key(key) for key in compiled.keys]
        assert keys == [(entry_["token"], entry_["bytes"]) for entry_ in document]


def test_simulator_records_read_the_same_one_chunk_or_many() -> None:
    for items in simulator_logprobs(3, tokens=40):
        compiled = scan_chat_compiled(items)
        assert compiled is not None and same(compiled, scan_chat_reference(items))
        # Several entries in one chunk, and empty chunks, read as the same positions.
        folded = [b",".join(items[:7]), b"", *items[7:30], b",".join(items[30:])]
        assert same(scan_chat_compiled(folded), compiled)
        assert same(scan_chat_reference(folded), compiled)
        assert same(scan_chat(tuple(items)), compiled)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks)
def test_generated_entries_read_the_same_and_decode(items: list[bytes]) -> None:
    compiled, reference = scan_chat_compiled(items), scan_chat_reference(items)
    assert same(compiled, reference)
    if compiled is None:
        return  # only past float64 (1e999) or with nothing in it
    keys = [decode_key(key) for key in compiled.keys]
    alternatives = iter(decode_key(key) for key in compiled.alt_keys)
    read = []
    for sampled, count in zip(keys, compiled.alt_counts.tolist(), strict=True):
        read.append(sampled)
        read.extend(next(alternatives) for _ in range(count))
    assert read == as_json(items)


@settings(max_examples=600, deadline=None)
@given(entry(), st.lists(st.tuples(st.integers(0, 400), st.binary(max_size=3)), max_size=4))
def test_mutated_entries_are_read_alike_or_refused_alike(
    valid: bytes, edits: list[tuple[int, bytes]]
) -> None:
    mutated = valid
    for at, replacement in edits:
        at %= len(mutated) + 1
        mutated = mutated[:at] + replacement + mutated[at + len(replacement) // 2 :]
    compiled = scan_chat_compiled([mutated])
    assert same(compiled, scan_chat_reference([mutated]))
    if compiled is not None:
        assert all(isinstance(decode_key(key), tuple) for key in compiled.keys + compiled.alt_keys)


@settings(max_examples=300, deadline=None)
@given(float_text)
def test_numbers_convert_as_float_does(text: str) -> None:
    entry_ = b'{"token":"a","logprob":' + text.encode() + b',"bytes":null,"top_logprobs":[]}'
    compiled = scan_chat_compiled([entry_])
    value = float(text)
    if value in (float("inf"), float("-inf")):
        assert compiled is None and scan_chat_reference([entry_]) is None
    else:
        assert compiled is not None
        assert compiled.logprobs.tobytes() == np.array([value]).tobytes()
