"""`python -m bench.recording`: the log sink's write rate, bytes per logged token, backlog replay.

Drives `gateway.recording.sink.LogSink` in-process against a fresh Postgres database with
realistic records (streamed 200-token chat calls whose top-5 logprobs a simulator produced),
with and without logprobs, runs alternating; measures what the tables store per token; then
spools a backlog equal to `--backlog-minutes` of `--backlog-rate` calls/s through a sink whose
database is down and times its replay, alone and with live traffic going on. Records the
section in docs/benchmarks.md; `--smoke` runs it tiny.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.harness.header import section_header
from bench.harness.profile import hotspots, recording
from bench.harness.record import DOC, publish
from bench.recording.backlog import copy_spool, replay, spool_backlog
from bench.recording.records import RecordFactory, simulator_logprobs
from bench.recording.report import RecordingRun, recording_section
from bench.recording.storage import stored
from bench.recording.throughput import SinkRun, row_building_seconds, sink_burst
from tests.support.databases import postgres_database

KINDS = {"with logprobs": True, "without logprobs": False}
# The same records through a recorder process, as the gateway runs the sink.
RECORDER_KIND = "with logprobs, recorder process"


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="per burst")
    parser.add_argument("--runs", type=int, default=3, help="bursts per kind")
    parser.add_argument("--variants", type=int, default=32, help="distinct simulator answers")
    parser.add_argument("--backlog-rate", type=float, default=100.0, help="calls/s")
    parser.add_argument("--backlog-minutes", type=float, default=10.0)
    parser.add_argument("--profile", action="store_true", help="py-spy an extra burst")
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    args = parser.parse_args(argv)
    if args.smoke:
        args.records, args.runs, args.variants = 300, 1, 4
        args.backlog_rate, args.backlog_minutes = 5.0, 1.0
    return args


def bursts(factory: RecordFactory, urls: dict[str, str], args: argparse.Namespace) -> Any:
    """`runs` bursts per kind, kinds alternating in order from one run to the next."""
    results: dict[str, list[SinkRun]] = {kind: [] for kind in KINDS}
    for index in range(args.runs):
        order = list(KINDS) if index % 2 == 0 else list(reversed(KINDS))
        for kind in order:
            warm = factory.records(1000, logprobs=KINDS[kind])
            batch = factory.records(args.records, logprobs=KINDS[kind])
            results[kind].append(sink_burst(urls[kind], warm, batch))
            print(f"burst {index + 1}: {kind} {results[kind][-1].per_second:,.0f}/s", flush=True)
        warm = factory.records(1000, logprobs=True)
        batch = factory.records(args.records, logprobs=True)
        found = sink_burst(urls[RECORDER_KIND], warm, batch, recorder=True)
        results.setdefault(RECORDER_KIND, []).append(found)
        print(f"burst {index + 1}: {RECORDER_KIND} {found.per_second:,.0f}/s", flush=True)
    return results


def measure(args: argparse.Namespace) -> RecordingRun:
    """Throughput, storage and backlog, each on its own fresh database."""
    factory = RecordFactory(simulator_logprobs(args.variants))
    building = {
        kind: row_building_seconds(factory.records(1000, logprobs=on)) / 1000
        for kind, on in KINDS.items()
    }
    building[RECORDER_KIND] = building["with logprobs"]
    backlog = int(args.backlog_rate * args.backlog_minutes * 60)
    with ExitStack() as exits:
        urls = {
            kind: exits.enter_context(postgres_database("plumbline_bench"))
            for kind in [*KINDS, RECORDER_KIND]
        }
        found = bursts(factory, urls, args)
        sizes = {kind: stored(url) for kind, url in urls.items()}
        profile = []
        if args.profile:
            spy = Path(tempfile.mkdtemp(prefix="plumbline-spy-")) / "sink.txt"
            batch = factory.records(args.records, logprobs=True)
            with recording(os.getpid(), spy):
                sink_burst(urls["with logprobs"], factory.records(100, logprobs=True), batch)
            profile = hotspots(spy)
        work = Path(tempfile.mkdtemp(prefix="plumbline-backlog-"))
        spooled = spool_backlog(factory.records(backlog, logprobs=True), work / "first")
        copy_spool(work / "first", work / "second")
        alone = replay(
            exits.enter_context(postgres_database("plumbline_bench")),
            work / "first",
            backlog,
            [],
            0.0,
        )
        live = factory.records(backlog, logprobs=True)
        busy = replay(
            exits.enter_context(postgres_database("plumbline_bench")),
            work / "second",
            backlog,
            live,
            args.backlog_rate,
        )
    return RecordingRun(found, building, sizes, spooled, [alone, busy], profile)


def main(argv: list[str] | None = None) -> str:
    """Run, print and record; returns the section."""
    args = parse(argv)
    notes = [
        "Records: streamed chat calls, 200 tokens, logprobs as one chunk per token (top-5, "
        "values from the simulator); the sink as the gateway configures it by default (batches "
        "of 1,000, 50 ms flush interval), written to a fresh database on the local Postgres."
    ]
    header = section_header("bench.recording", notes, busy=args.busy)
    section = recording_section(header, measure(args), args)
    return publish("Recording: the log sink", "recording", section, args)


if __name__ == "__main__":
    main()
