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
from bench.recording.breakdown import v3_breakdown
from bench.recording.records import RecordFactory, realistic_logprobs, simulator_logprobs
from bench.recording.report import RecordingRun, recording_section
from bench.recording.storage import stored
from bench.recording.throughput import SinkRun, row_building_seconds, sink_burst, v3_rows
from gateway.recording.logprob_rows import LogprobForm
from tests.support.databases import postgres_database

KINDS = {"with logprobs": True, "without logprobs": False}
# The same records through a recorder process, as the gateway runs the sink: today's storage
# form (v1), the columns (v2) and the vocabulary ids (v3), so they compare in one run.
RECORDER_KIND = "with logprobs, recorder process"
V2_KIND = "v2 with logprobs, recorder process"
V3_KIND = "v3 with logprobs, recorder process"
FORMS: dict[str, LogprobForm] = {RECORDER_KIND: "v1", V2_KIND: "v2", V3_KIND: "v3"}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="per burst")
    parser.add_argument("--runs", type=int, default=3, help="bursts per kind")
    parser.add_argument("--variants", type=int, default=32, help="distinct answers")
    parser.add_argument("--warm", type=int, default=1000, help="records before each burst")
    parser.add_argument(
        "--source",
        choices=["realistic", "simulator"],
        default="realistic",
        help="logprobs like a 128k-vocabulary model's, or the tiny simulator's",
    )
    parser.add_argument("--backlog-rate", type=float, default=100.0, help="calls/s")
    parser.add_argument("--backlog-minutes", type=float, default=10.0)
    parser.add_argument(
        "--profile", action="store_true", help="py-spy an extra burst (v3, the sink in-process)"
    )
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    args = parser.parse_args(argv)
    if args.smoke:
        args.records, args.runs, args.variants, args.warm = 300, 1, 4, 100
        args.backlog_rate, args.backlog_minutes = 5.0, 1.0
    return args


def bursts(factory: RecordFactory, urls: dict[str, str], args: argparse.Namespace) -> Any:
    """`runs` bursts per kind, kinds alternating in order from one run to the next."""
    results: dict[str, list[SinkRun]] = {kind: [] for kind in KINDS}
    for index in range(args.runs):
        order = list(KINDS) if index % 2 == 0 else list(reversed(KINDS))
        for kind in order:
            warm = factory.records(args.warm, logprobs=KINDS[kind])
            batch = factory.records(args.records, logprobs=KINDS[kind])
            results[kind].append(sink_burst(urls[kind], warm, batch))
            print(f"burst {index + 1}: {kind} {results[kind][-1].per_second:,.0f}/s", flush=True)
        forms = list(FORMS.items()) if index % 2 == 0 else list(reversed(FORMS.items()))
        for kind, form in forms:
            warm = factory.records(args.warm, logprobs=True)
            batch = factory.records(args.records, logprobs=True)
            found = sink_burst(urls[kind], warm, batch, recorder=True, form=form)
            results.setdefault(kind, []).append(found)
            print(f"burst {index + 1}: {kind} {found.per_second:,.0f}/s", flush=True)
    return results


def measure(args: argparse.Namespace) -> RecordingRun:
    """Throughput, storage and backlog, each on its own fresh database."""
    source = realistic_logprobs if args.source == "realistic" else simulator_logprobs
    factory = RecordFactory(source(args.variants))
    building = {
        kind: row_building_seconds(factory.records(args.warm, logprobs=on)) / args.warm
        for kind, on in KINDS.items()
    }
    building[RECORDER_KIND] = building["with logprobs"]
    building[V2_KIND] = row_building_seconds(factory.records(args.warm, logprobs=True), "v2")
    building[V2_KIND] /= args.warm
    backlog = int(args.backlog_rate * args.backlog_minutes * 60)
    with ExitStack() as exits:
        urls = {
            kind: exits.enter_context(postgres_database("plumbline_bench"))
            for kind in [*KINDS, *FORMS]
        }
        # v3 rows alone with the vocabulary warm (a first pass gives out the ids), on a
        # database of their own so the bursts' vocabulary starts empty as a new one does.
        v3 = exits.enter_context(v3_rows(exits.enter_context(postgres_database("plumbline_bench"))))
        warm = factory.records(args.warm, logprobs=True)
        row_building_seconds(warm, "v3", v3)
        building[V3_KIND] = row_building_seconds(warm, "v3", v3) / args.warm
        stages = v3_breakdown(warm, v3)
        found = bursts(factory, urls, args)
        sizes = {kind: stored(url) for kind, url in urls.items()}
        profile = []
        if args.profile:
            spy = Path(tempfile.mkdtemp(prefix="plumbline-spy-")) / "sink.txt"
            batch = factory.records(args.records, logprobs=True)
            with recording(os.getpid(), spy):
                warm = factory.records(100, logprobs=True)
                sink_burst(urls[V3_KIND], warm, batch, form="v3")
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
    return RecordingRun(found, building, sizes, spooled, [alone, busy], profile, stages)


def main(argv: list[str] | None = None) -> str:
    """Run, print and record; returns the section."""
    args = parse(argv)
    values = (
        "shaped like a real model's: tokens drawn Zipf-like from a 128,000-string vocabulary "
        "with multi-byte UTF-8 and byte tokens, float32 values, sampled near 0, alternatives "
        "down to about -20"
        if args.source == "realistic"
        else "values from the simulator"
    )
    notes = [
        f"Records: streamed chat calls, 200 tokens, logprobs as one chunk per token (top-5, "
        f"{values}); the sink as the gateway configures it by default (batches of 1,000, 50 ms "
        f"flush interval), written to a fresh database on the local Postgres."
    ]
    header = section_header("bench.recording", notes, busy=args.busy)
    section = recording_section(header, measure(args), args)
    return publish("Recording: the log sink", "recording", section, args)


if __name__ == "__main__":
    main()
