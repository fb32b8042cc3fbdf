"""The recording scenario's markdown section."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.harness.profile import Hotspot, hotspot_lines
from bench.harness.stats import median
from bench.harness.verdict import Verdict, at_least, verdict_table
from bench.recording.backlog import Replay, Spooled
from bench.recording.storage import Stored
from bench.recording.throughput import SinkRun

TARGET_PER_SECOND = 10_000


@dataclass
class RecordingRun:
    """Everything one run measured; keys of `bursts` and `building` are with / without."""

    bursts: dict[str, list[SinkRun]]
    building: dict[str, float]  # seconds per record building rows alone
    stored: dict[str, Stored]
    spooled: Spooled
    replays: list[Replay]
    profile: list[Hotspot] = field(default_factory=list)


def _burst_rows(run: RecordingRun) -> list[str]:
    lines = [
        "| records | runs: records/s | median records/s | submitting process CPU ms/record "
        "| recorder process CPU ms/record | rows alone µs/record "
        "| Postgres backend CPU ms/record |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for kind, bursts in run.bursts.items():
        rate = median([b.per_second for b in bursts])
        cpu = median([b.process_cpu_s / b.records * 1000 for b in bursts])
        pg = median([b.postgres_cpu_s / b.records * 1000 for b in bursts])
        spent = [b.recorder_cpu_s / b.records * 1000 for b in bursts if b.recorder_cpu_s]
        recorder = f"{median(spent):.3f}" if spent else "-"
        lines.append(
            f"| {kind} | "
            + ", ".join(f"{b.per_second:,.0f}" for b in bursts)
            + f" | {rate:,.0f} | {cpu:.3f} | {recorder} | {run.building[kind] * 1e6:,.0f} "
            f"| {pg:.3f} |"
        )
    return lines


def _storage_lines(run: RecordingRun) -> list[str]:
    lines = []
    with_lp = run.stored.get("with logprobs")
    without = run.stored.get("without logprobs")
    if with_lp is not None:
        lines.append(
            f"- With logprobs: `call_logprobs` {with_lp.bytes_per_token:.1f} bytes per logged "
            f"token ({with_lp.logprob_rows:,} rows, {with_lp.logprob_tokens:,} tokens, "
            f"table + TOAST + index); with the `calls` rows "
            f"{with_lp.total_per_token:.1f} bytes per token."
        )
    if without is not None:
        lines.append(
            f"- Without logprobs: {without.call_row_bytes:.0f} bytes per `calls` row "
            f"(heap + indexes, {without.calls_rows:,} rows)."
        )
    return lines


def _replay_lines(run: RecordingRun, args: Any) -> list[str]:
    spooled = run.spooled
    minutes = args.backlog_minutes
    lines = [
        f"- Backlog: {minutes:g} minutes at {args.backlog_rate:g} calls/s = {spooled.records:,} "
        f"records (200 tokens, top-5 logprobs) spooled by a sink whose database was down in "
        f"{spooled.seconds:.1f} s: {spooled.files} files, {spooled.bytes / 2**20:,.0f} MiB."
    ]
    for replay in run.replays:
        speed = spooled.records / replay.seconds
        if replay.live_submitted:
            lines.append(
                f"- Replay while live traffic goes on at {args.backlog_rate:g} calls/s: spool "
                f"empty after {replay.seconds:.1f} s ({speed:,.0f} records/s); "
                f"{replay.live_written_during:,} of the live records were written meanwhile; "
                f"all {replay.live_submitted:,} live records in the database after "
                f"{replay.seconds_until_live_written:.1f} s."
            )
        else:
            lines.append(
                f"- Replay alone: {replay.seconds:.1f} s ({speed:,.0f} records/s, "
                f"{minutes * 60 / replay.seconds:.0f}x real time)."
            )
    return lines


def recording_section(header: list[str], run: RecordingRun, args: Any) -> str:
    """The dated section for docs/benchmarks.md."""
    # The gateway runs the sink in a recorder process: that is the figure the target is about.
    kind = next((k for k in run.bursts if "recorder" in k), "with logprobs")
    with_lp = median([b.per_second for b in run.bursts.get(kind, [])])
    verdicts = [
        Verdict(
            f"log sink ≥ {TARGET_PER_SECOND:,} records/s with logprobs",
            f"{with_lp:,.0f} records/s ({kind})",
            at_least(with_lp, TARGET_PER_SECOND),
        )
    ]
    lines = [
        *header,
        "",
        f"Sink throughput: bursts of {args.records:,} records (after 1,000 to warm up), "
        f"runs per kind: {args.runs}, kinds alternating:",
        "",
        *_burst_rows(run),
        "",
        "Storage:",
        "",
        *_storage_lines(run),
        "",
        "Backlog:",
        "",
        *_replay_lines(run, args),
        "",
        "Targets:",
        "",
        *verdict_table(verdicts),
    ]
    if run.profile:
        lines += ["", "Profile of the sink's threads during a burst with logprobs (py-spy):", ""]
        lines += hotspot_lines(run.profile)
    return "\n".join(lines) + "\n"
