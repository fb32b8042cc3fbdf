"""`python -m bench.recording.recorder_rate`: v3 records per recorder core-second, and why.

One recorder process (as the gateway runs it) on a fresh Postgres database, warmed, then
`--bursts` bursts of `--records` realistic 200-token top-5 records; each burst's figure is
records over the recorder's CPU seconds. `--profile` py-spies the first burst and prints the
recorder's hottest functions. Prints only (the recorded figure is `python -m bench.recording`'s):
it is the quick check for one change, and run with PYTHONPATH at another checkout it gives
that tree's figure on the same machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from contextlib import ExitStack, nullcontext
from pathlib import Path

from bench.harness.procstat import cpu_seconds
from bench.harness.profile import hotspots, recording
from bench.recording.records import RecordFactory, realistic_logprobs
from gateway.config import RecordingConfig
from gateway.recording.recorder_process import RecorderProcess
from tests.support.databases import postgres_database


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=5000, help="per burst")
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument("--variants", type=int, default=32, help="distinct answers")
    parser.add_argument("--warm", type=int, default=2000)
    parser.add_argument("--profile", action="store_true", help="py-spy the first burst")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Run the bursts and print each one's rate."""
    args = parse(argv)
    factory = RecordFactory(realistic_logprobs(args.variants))
    with ExitStack() as exits:
        url = exits.enter_context(postgres_database("plumbline_bench"))
        spool = Path(exits.enter_context(tempfile.TemporaryDirectory(prefix="plumbline-rate-")))
        config = RecordingConfig(
            spool_dir=spool, queue_capacity=args.records + args.warm + 1, logprob_form="v3"
        )
        recorder = RecorderProcess(url, 5, config)
        recorder.start()
        exits.callback(recorder.stop)
        for record in factory.records(args.warm, logprobs=True):
            recorder.submit(record)
        if not recorder.flush(timeout=600) or recorder.pid is None:
            raise RuntimeError("the recorder did not write the warm-up records")
        batch = factory.records(args.records, logprobs=True)
        spy = spool / "recorder.txt"
        for burst in range(args.bursts):
            profiling = args.profile and burst == 0
            with recording(recorder.pid, spy) if profiling else nullcontext():
                before, started = cpu_seconds(recorder.pid), time.perf_counter()
                for record in batch:
                    recorder.submit(record)
                if not recorder.flush(timeout=3600):
                    raise RuntimeError("the recorder did not catch up within an hour")
                cpu, wall = cpu_seconds(recorder.pid) - before, time.perf_counter() - started
            print(
                f"burst {burst + 1}: {args.records} records in {wall:.2f} s, recorder CPU "
                f"{cpu:.2f} s: {args.records / cpu:,.0f} records per recorder core-second "
                f"({cpu / args.records * 1e6:.0f} µs a record)",
                flush=True,
            )
        if args.profile:
            for spot in hotspots(spy, top=20, by_own=True):
                print(f"{spot.own:6.1%} own {spot.inclusive:6.1%} on stack  {spot.function}")


if __name__ == "__main__":
    main()
