"""Headers: a response's header fields, looked up regardless of case."""

from __future__ import annotations

from collections.abc import Iterator
from typing import overload


class Headers:
    """Response headers by lower-cased name; repeated fields are joined with a comma."""

    __slots__ = ("_fields",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        fields: dict[str, str] = {}
        for name, value in raw:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            fields[key] = f"{fields[key]}, {text}" if key in fields else text
        self._fields = fields

    @overload
    def get(self, name: str) -> str | None: ...

    @overload
    def get(self, name: str, default: str) -> str: ...

    def get(self, name: str, default: str | None = None) -> str | None:
        """The field's value, or `default` when absent."""
        return self._fields.get(name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return self._fields[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __repr__(self) -> str:
        return f"Headers({self._fields!r})"
