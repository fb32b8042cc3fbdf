"""Both logprob scanners refuse what is not exactly vLLM's layout, and read edge values alike."""

from __future__ import annotations

import numpy as np
import pytest

from plumbline.logprob_scan import ScannedChat, decode_key, scan_chat_compiled, scan_chat_reference

ALTERNATIVE = b'{"token":"\\u00e9t\xc3\xa9 \xf0\x9f\x98\x80","logprob":-1.5e-3,"bytes":[195,169]}'
ENTRY = (
    b'{"token":"a\\"b","logprob":-0.25,"bytes":[97,34,98],"top_logprobs":['
    + ALTERNATIVE
    + b',{"token":"","logprob":-20,"bytes":null}]}'
)
SCANNERS = [scan_chat_compiled, scan_chat_reference]


def both(items: list[bytes]) -> list[ScannedChat | None]:
    """What each scanner reads from the items."""
    return [scan(items) for scan in SCANNERS]


def with_logprob(text: bytes) -> bytes:
    """ENTRY with its sampled logprob written as `text`."""
    return ENTRY.replace(b"-0.25", text, 1)


def with_token(content: bytes) -> bytes:
    """ENTRY with its sampled token's JSON content `content`."""
    return ENTRY.replace(b'a\\"b', content, 1)


def test_the_small_document_reads_as_written() -> None:
    for read in both([ENTRY]):
        assert read is not None
        assert read.keys == [b'a\\"b\x00[97,34,98]']
        assert read.logprobs.tolist() == [-0.25] and read.alt_counts.tolist() == [2]
        assert read.alt_logprobs.tolist() == [-1.5e-3, -20.0]
        assert [decode_key(key) for key in read.alt_keys] == [("été 😀", [195, 169]), ("", None)]


@pytest.mark.parametrize("scan", SCANNERS)
def test_every_truncation_is_refused(scan: object) -> None:
    assert callable(scan)
    for end in range(len(ENTRY)):
        assert scan([ENTRY[:end]]) is None, ENTRY[:end]
        assert scan([ENTRY, ENTRY[:end]]) is None or end == 0


REFUSED = {
    "flipped key order": ENTRY.replace(
        b'"logprob":-0.25,"bytes":[97,34,98]', b'"bytes":[97,34,98],"logprob":-0.25'
    ),
    "whitespace": ENTRY.replace(b'"logprob":', b'"logprob": ', 1),
    "extra key": ENTRY.replace(b',"top_logprobs"', b',"rank":1,"top_logprobs"'),
    "top_logprobs null": ENTRY.split(b',"top_logprobs"')[0] + b',"top_logprobs":null}',
    "trailing comma": ENTRY + b",",
    "two entries without comma": ENTRY + ENTRY,
    "NaN": with_logprob(b"NaN"),
    "Infinity": with_logprob(b"Infinity"),
    "-Infinity": with_logprob(b"-Infinity"),
    "overflow": with_logprob(b"-1e999"),
    "overflow without exponent": with_logprob(b"-" + b"9" * 400),
    "leading zero": with_logprob(b"-01.5"),
    "bare point": with_logprob(b"-1."),
    "point first": with_logprob(b"-.5"),
    "plus sign": with_logprob(b"+1"),
    "empty exponent": with_logprob(b"-1e"),
    "hex": with_logprob(b"0x10"),
    "raw control char": with_token(b"a\x01b"),
    "raw newline": with_token(b"a\nb"),
    "bad escape": with_token(b"a\\x41"),
    "short \\u": with_token(b"a\\u12"),
    "non-hex \\u": with_token(b"a\\u12G4"),
    "lone high surrogate": with_token(b"\\ud83d"),
    "high surrogate then letter": with_token(b"\\ud83dx"),
    "high surrogate then non-low": with_token(b"\\ud83d\\u0041"),
    "lone low surrogate": with_token(b"\\ude00"),
    "invalid byte": with_token(b"a\xffb"),
    "continuation first": with_token(b"\x80"),
    "overlong": with_token(b"\xc0\x80"),
    "overlong three": with_token(b"\xe0\x80\x80"),
    "encoded surrogate": with_token(b"\xed\xa0\x80"),
    "past U+10FFFF": with_token(b"\xf4\x90\x80\x80"),
    "cut sequence": with_token(b"\xe2\x82"),
    "unterminated string": b'{"token":"abc',
    "bytes past 255": ENTRY.replace(b"[97,34,98]", b"[97,256,98]"),
    "bytes leading zero": ENTRY.replace(b"[97,34,98]", b"[97,034,98]"),
    "bytes negative": ENTRY.replace(b"[97,34,98]", b"[-1]"),
    "bytes trailing comma": ENTRY.replace(b"[97,34,98]", b"[97,]"),
    "bytes a string": ENTRY.replace(b"[97,34,98]", b'"ab"'),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_off_layout_is_refused(name: str) -> None:
    assert both([REFUSED[name]]) == [None, None]
    assert both([ENTRY, REFUSED[name]]) == [None, None]


def test_an_entry_split_across_chunks_is_refused() -> None:
    cut = ENTRY.index(b',"bytes"')
    assert both([ENTRY[:cut], ENTRY[cut + 1 :]]) == [None, None]
    assert both([]) == [None, None] and both([b"", b""]) == [None, None]


ACCEPTED = {
    "surrogate pair": (with_token(b"\\ud83D\\uDE00"), "\U0001f600"),
    "escaped NUL": (with_token(b"\\u0000"), "\x00"),
    "every short escape": (with_token(b'\\"\\\\\\/\\b\\f\\n\\r\\t'), '"\\/\b\f\n\r\t'),
    "DEL raw": (with_token(b"\x7f"), "\x7f"),
    "four-byte UTF-8": (with_token(b"\xf4\x8f\xbf\xbf"), "\U0010ffff"),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_edge_strings_are_read_and_decode(name: str) -> None:
    document, token = ACCEPTED[name]
    compiled, reference = both([document])
    assert compiled is not None and reference is not None
    assert compiled.keys == reference.keys and decode_key(compiled.keys[0])[0] == token


EDGE_NUMBERS = [
    "-0.0",
    "-0",
    "0e999999",
    "-5e-324",  # the smallest subnormal
    "-2.4703282292062327e-324",  # below half of it: rounds to -0.0
    "-2.2250738585072011e-308",
    "-1.7976931348623157e308",
    "9007199254740993",  # a midpoint between doubles: ties to even
    # Each rounds onto a midpoint between doubles in 64 bits (not in its exact value), where a
    # second rounding ties to the wrong side: the fast conversion must hand these to dtoa.
    "1.802265021737803008",
    "-1.102227158804603202",
    "1.686483746723400512",
    "-0.1000000000000000055511151231257827021181583404541015625",
    "-" + "1" * 40 + "e-40",
    "-1" + "0" * 30 + "e-30",
    "-0." + "0" * 400 + "1e400",
    "-1E+2",
    "-123456789012345678e-27",
]


@pytest.mark.parametrize("text", EDGE_NUMBERS)
def test_edge_numbers_convert_as_float_does(text: str) -> None:
    expected = np.array([float(text)], dtype=np.float64).tobytes()
    for read in both([with_logprob(text.encode())]):
        assert read is not None and read.logprobs.tobytes() == expected, text


def test_items_that_are_not_bytes_are_a_type_error() -> None:
    with pytest.raises(TypeError):
        scan_chat_compiled([ENTRY.decode()])  # type: ignore[list-item]


def test_large_hostile_entries_read_alike() -> None:
    long_token = with_token(b"\\u00e9\xc3\xa9x" * 300_000)  # 2.4 MB of one string
    long_number = with_logprob(b"-0." + b"3" * 100_000 + b"e-5")
    many = b'{"token":"x","logprob":-1,"bytes":[120]}'
    wide = ENTRY.replace(ALTERNATIVE, b",".join([many] * 50_000))
    for document in (long_token, long_number, wide):
        compiled, reference = both([document])
        assert compiled is not None and reference is not None
        assert compiled.keys == reference.keys and compiled.alt_keys == reference.alt_keys
        assert compiled.logprobs.tobytes() == reference.logprobs.tobytes()
        assert compiled.alt_logprobs.tobytes() == reference.alt_logprobs.tobytes()
    wide_read = scan_chat_compiled([wide])
    assert wide_read is not None and wide_read.alt_counts.tolist() == [50_001]
