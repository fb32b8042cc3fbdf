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
TARGET_PER_CORE = 3_000  # records/s per recorder core (CPU seconds), v2 form
TARGET_BYTES_PER_TOKEN = 24.0
V1_KIND, V2_KIND = "with logprobs, recorder process", "v2 with logprobs, recorder process"


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


@dataclass(frozen=True)
class FormFigures:
    """One storage form's recorder CPU, rate per core, rows-alone CPU and bytes per token."""

    recorder_ms: float
    per_core: float
    rows_us: float
    bytes_per_token: float


def form_figures(run: RecordingRun, kind: str) -> FormFigures | None:
    """The figures of a recorder-process kind, if this run measured it."""
    spent = [b.recorder_cpu_s / b.records for b in run.bursts.get(kind, []) if b.recorder_cpu_s]
    sizes = run.stored.get(kind)
    if not spent or sizes is None:
        return None
    per_record = median(spent)
    return FormFigures(
        per_record * 1000, 1 / per_record, run.building[kind] * 1e6, sizes.bytes_per_token
    )


def _form_lines(run: RecordingRun) -> list[str]:
    v1, v2 = form_figures(run, V1_KIND), form_figures(run, V2_KIND)
    if v1 is None or v2 is None:
        return []
    lines = [
        "| storage form | recorder CPU ms/record | records/s per recorder core "
        "| rows alone CPU µs/record | `call_logprobs` bytes per logged token |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, f in (("v1 (today: JSON, zstd)", v1), ("v2 (columns)", v2)):
        lines.append(
            f"| {name} | {f.recorder_ms:.3f} | {f.per_core:,.0f} | {f.rows_us:,.0f} "
            f"| {f.bytes_per_token:.1f} |"
        )
    lines += [
        "",
        f"v2 against v1, same run: {v2.per_core / v1.per_core:.2f}x the records per recorder "
        f"core, {v1.bytes_per_token / v2.bytes_per_token:.2f}x fewer bytes per logged token, "
        f"rows alone {v1.rows_us / v2.rows_us:.2f}x as fast.",
    ]
    return lines


def _form_verdicts(run: RecordingRun) -> list[Verdict]:
    v2 = form_figures(run, V2_KIND)
    if v2 is None:
        return []
    return [
        Verdict(
            f"recorder ≥ {TARGET_PER_CORE:,} records/s per core with top-5 logprobs (v2)",
            f"{v2.per_core:,.0f} records/s per core",
            at_least(v2.per_core, TARGET_PER_CORE),
        ),
        Verdict(
            f"≤ {TARGET_BYTES_PER_TOKEN:g} bytes per logged token with top-5 (v2)",
            f"{v2.bytes_per_token:.1f} bytes",
            at_least(TARGET_BYTES_PER_TOKEN, v2.bytes_per_token),
        ),
    ]


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
    v2 = run.stored.get(V2_KIND)
    if v2 is not None:
        lines.append(
            f"- v2 with logprobs: `call_logprobs` {v2.bytes_per_token:.1f} bytes per logged token "
            f"({v2.logprob_rows:,} rows); with the `calls` rows {v2.total_per_token:.1f}."
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
        ),
        *_form_verdicts(run),
    ]
    lines = [
        *header,
        "",
        f"Sink throughput: bursts of {args.records:,} records (after {args.warm:,} to warm up), "
        f"runs per kind: {args.runs}, kinds alternating:",
        "",
        *_burst_rows(run),
        "",
        "Storage forms, both through a recorder process (CPU seconds of the recorder):",
        "",
        *_form_lines(run),
        "",
        "Storage (v1 unless named):",
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
