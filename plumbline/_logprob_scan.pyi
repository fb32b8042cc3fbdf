"""The compiled reader of vLLM's chat logprob layout (_logprob_scan.c)."""

def scan(
    items: list[bytes] | tuple[bytes, ...], /
) -> tuple[list[bytes], bytearray, bytearray, list[bytes], bytearray] | None:
    """A choice's logprob entries as columns, or None off vLLM's layout."""
