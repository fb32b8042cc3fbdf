"""The compiled logprob scanner is built wherever the install had a C compiler (CI has gcc)."""

from __future__ import annotations

import os

from plumbline.logprob_scan import compiled_scanner_built, scan_chat, scan_chat_compiled

# Set where a machine installs without a compiler on purpose: there the reference must be used.
ABSENT = "PLUMBLINE_LOGPROB_SCAN_UNBUILT"
ENTRY = b'{"token":"a","logprob":-0.5,"bytes":[97],"top_logprobs":[]}'


def test_the_compiled_scanner_is_built_unless_declared_unbuilt() -> None:
    # `make venv` builds the optional extension; a silently skipped build (no compiler, a broken
    # setup.py) would leave the recorder on the slow reference, so it fails here.
    declared_unbuilt = os.environ.get(ABSENT) == "1"
    assert compiled_scanner_built() is not declared_unbuilt
    read = scan_chat([ENTRY])
    assert read is not None and read.keys == [b"a\x00[97]"]
    if not declared_unbuilt:
        compiled = scan_chat_compiled([ENTRY])
        assert compiled is not None and compiled.logprobs.tolist() == [-0.5]
