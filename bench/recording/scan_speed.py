"""`python -m bench.recording.scan_speed`: CPU µs per record to read a choice's chat logprobs.

One 200-token top-5 record shaped like a 128k-vocabulary model's (about 86 KB) read by the
compiled scanner, by the plain-Python reference, and by `orjson.loads` of the same entries as one
JSON array (objects, no columns), side by side in one run. Each is timed in CPU seconds of this
process (not wall time: the machine is shared), best of `--repeat` rounds of `--number` reads
through every record. Prints only; `--only` runs one reader (for callgrind's instruction counts).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import orjson

from bench.recording.records import TOKENS, TOP_K, realistic_logprobs
from plumbline.logprob_scan import compiled_scanner_built, scan_chat_compiled, scan_chat_reference

Reader = Callable[[list[bytes]], object]


def _orjson_loads(items: list[bytes]) -> object:
    return orjson.loads(b"[" + b",".join(items) + b"]")


READERS: dict[str, Reader] = {
    "compiled scan_chat": scan_chat_compiled,
    "reference scan_chat": scan_chat_reference,
    "orjson.loads (objects)": _orjson_loads,
}


def cpu_us_per_record(read: Reader, records: list[list[bytes]], number: int, repeat: int) -> float:
    """Best of `repeat` rounds: CPU µs per record over `number` passes through `records`."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            for items in records:
                read(items)
        best = min(best, time.process_time() - start)
    return best / (number * len(records)) * 1e6


def main(argv: list[str] | None = None) -> None:
    """Print µs per record and the ratios to the compiled scanner."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=8, help="distinct records")
    parser.add_argument("--number", type=int, default=20, help="passes per round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best counts")
    parser.add_argument("--only", choices=sorted(READERS), default=None)
    args = parser.parse_args(argv)
    if not compiled_scanner_built():
        raise SystemExit("plumbline._logprob_scan is not built: python setup.py build_ext -i")
    records = realistic_logprobs(args.variants)
    size = sum(len(item) for items in records for item in items) / len(records)
    load = os.getloadavg()[0]
    print(
        f"{TOKENS}-token top-{TOP_K} realistic records, {size / 1000:.1f} KB each, load {load:.2f}"
    )
    chosen = {args.only: READERS[args.only]} if args.only else READERS
    timings = {
        name: cpu_us_per_record(read, records, args.number, args.repeat)
        for name, read in chosen.items()
    }
    base = timings.get("compiled scan_chat")
    for name, us in timings.items():
        ratio = f"  {us / base:6.1f}x compiled" if base else ""
        print(f"{name:24} {us:9.1f} µs/record  {1e6 / us:8.0f} records/s/core{ratio}")


if __name__ == "__main__":
    main()
