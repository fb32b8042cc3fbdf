"""vLLM 0.32's 400 for a body its schema rejects: each error cleaned, summarised and bounded."""

from __future__ import annotations

import re
from typing import Any

from simulator.errors import ApiError

# Parts of a pydantic `loc` that name schema internals (union branches, wrappers), not fields.
_INTERNAL_LOC_PARTS = frozenset(
    {
        "function-wrap",
        "function-after",
        "function-before",
        "function-plain",
        "json-or-python",
        "lax-or-strict",
        "chain",
        "default",
        "nullable",
        "tagged-union",
        "union",
        "call",
        "arguments",
        "is-instance",
        "is-subclass",
        "callable",
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "bytearray",
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "complex",
        "none",
        "nonetype",
    }
)
_BRACKETED = re.compile(r"[\[\]{}()]")
# The `type` of the 400 for a body the schema rejects (FastAPI's, not an engine error's).
SCHEMA_ERROR_TYPE = "Bad Request"
MAX_REPORTED_ERRORS = 10
MAX_INPUT_CHARS = 200
MAX_ERROR_CHARS = 1000
_TRUNCATED = "...[truncated]"
_SANITIZERS = (
    (re.compile(r" at 0x[0-9a-fA-F]+>"), ">"),
    (re.compile(r'\n?\s*File "[^"]+", line \d+, in \S+(\n\s+.*)?'), ""),
    (re.compile(r"/(?:home|usr|opt|var|tmp|root|lib|mnt|srv)(?:/[\w.\-]+)+"), "<path>"),
    (re.compile(r"(?:/[\w\-]+)+/[\w\-]+\.\w+"), "<path>"),
)


def summarize_input(value: Any) -> str:
    """The `input` of an error as vLLM shows it: containers described, text cut at 200."""
    if isinstance(value, bytes | bytearray):
        return f"<{type(value).__name__} of {len(value)} bytes>"
    if isinstance(value, list | tuple | set | frozenset | dict):
        return f"<{type(value).__name__} of {len(value)} items>"
    text = value if isinstance(value, str) else str(value)
    return text[:MAX_INPUT_CHARS] + _TRUNCATED if len(text) > MAX_INPUT_CHARS else text


def clean_loc(loc: tuple[Any, ...]) -> str:
    """A `loc` as a dotted path of the fields a client knows (schema internals dropped)."""
    parts = [str(part) for part in loc]
    kept = [p for p in parts if not (_BRACKETED.search(p) or p.lower() in _INTERNAL_LOC_PARTS)]
    return ".".join(kept or parts)


def _format(error: dict[str, Any]) -> str:
    item = dict(error)
    if "input" in item:
        item["input"] = summarize_input(item["input"])
    item["loc"] = clean_loc(tuple(item["loc"]))
    text = str(item)
    return text[:MAX_ERROR_CHARS] + _TRUNCATED if len(text) > MAX_ERROR_CHARS else text


def _sanitize(message: str) -> str:
    for pattern, replacement in _SANITIZERS:
        message = pattern.sub(replacement, message)
    return message.strip()


def validation_error(errors: list[dict[str, Any]]) -> ApiError:
    """Errors as `{"type", "loc", "msg", "input"[, "ctx"]}` dicts, with the loc as a tuple."""
    count = len(errors)
    label = "error" if count == 1 else "errors"
    message = f"{count} validation {label}:\n"
    message += "".join(f"  {_format(error)}\n" for error in errors[:MAX_REPORTED_ERRORS])
    if count > MAX_REPORTED_ERRORS:
        message += f"  ...and {count - MAX_REPORTED_ERRORS} more {label}\n"
    param = clean_loc(tuple(errors[0]["loc"])) if errors else None
    return ApiError(
        _sanitize(message.rstrip()), status=400, err_type=SCHEMA_ERROR_TYPE, param=param
    )
