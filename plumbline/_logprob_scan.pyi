"""The compiled reader of vLLM's chat logprob layout (_logprob_scan.c, _logprob_keys.c)."""

def scan(
    items: list[bytes] | tuple[bytes, ...], /
) -> tuple[list[bytes], bytearray, bytearray, list[bytes], bytearray] | None:
    """A choice's logprob entries as columns, or None off vLLM's layout."""

class KeyTable:
    """A bounded table of logprob vocabulary keys and their ids."""

    def __init__(self, capacity: int, max_key_bytes: int, seed: bytes) -> None: ...
    def __len__(self) -> int: ...
    def get(self, key: bytes, /) -> int | None:
        """The key's id, or None."""
    def add(self, keys: list[bytes], ids: list[int], /) -> None:
        """Hold these keys with these ids."""
    def clear(self) -> None:
        """Hold nothing, and free the memory."""
    def lookup(self, keys: list[bytes], /) -> tuple[bytearray, list[bytes]]:
        """Ids of bytes keys (-(1 + j) for missing[j]) and the keys missing."""

def scan_ids(
    items: list[bytes] | tuple[bytes, ...], table: KeyTable, /
) -> tuple[bytearray, bytearray, bytearray, bytearray, bytearray, list[bytes], bytes, bool] | None:
    """A choice's logprob entries as columns of vocabulary ids, or None off vLLM's layout."""

def top_columns(
    ids: object, lps: object, alt_ids: object, alt_lps: object, k: int, step: float, /
) -> tuple[bytearray, bytearray, bytearray]:
    """The v3 top-k columns: places of the sampled token, other ids, zigzag step deltas."""
