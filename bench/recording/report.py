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
TARGET_PER_CORE = 3_000  # records/s per recorder core (CPU seconds), the newest form
TARGET_BYTES_PER_TOKEN = 24.0
V1_KIND, V2_KIND = "with logprobs, recorder process", "v2 with logprobs, recorder process"
V3_KIND = "v3 with logprobs, recorder process"
FORM_NAMES = {
    V1_KIND: "v1 (today: JSON, zstd)",
    V2_KIND: "v2 (columns)",
    V3_KIND: "v3 (vocabulary ids)",
}


@dataclass
class RecordingRun:
    """Everything one run measured; keys of `bursts` and `building` are with / without."""

    bursts: dict[str, list[SinkRun]]
    building: dict[str, float]  # seconds per record building rows alone
    stored: dict[str, Stored]
    spooled: Spooled
    replays: list[Replay]
    profile: list[Hotspot] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)  # v3 row building, µs per record


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
    figures = {k: form_figures(run, k) for k in FORM_NAMES}
    v1 = figures[V1_KIND]
    if v1 is None:
        return []
    lines = [
        "| storage form | recorder CPU ms/record | records/s per recorder core "
        "| rows alone CPU µs/record | `call_logprobs` bytes per logged token |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for kind, f in figures.items():
        if f is not None:
            lines.append(
                f"| {FORM_NAMES[kind]} | {f.recorder_ms:.3f} | {f.per_core:,.0f} "
                f"| {f.rows_us:,.0f} | {f.bytes_per_token:.1f} |"
            )
    lines.append("")
    for kind in (V2_KIND, V3_KIND):
        f = figures[kind]
        if f is not None:
            lines.append(
                f"{kind.split()[0]} against v1, same run: {f.per_core / v1.per_core:.2f}x the "
                f"records per recorder core, {v1.bytes_per_token / f.bytes_per_token:.2f}x fewer "
                f"bytes per logged token, rows alone {v1.rows_us / f.rows_us:.2f}x as fast."
            )
    return lines


def _form_verdicts(run: RecordingRun) -> list[Verdict]:
    kind = V3_KIND if form_figures(run, V3_KIND) is not None else V2_KIND
    newest = form_figures(run, kind)
    if newest is None:
        return []
    name = kind.split()[0]
    return [
        Verdict(
            f"recorder ≥ {TARGET_PER_CORE:,} records/s per core with top-5 logprobs ({name})",
            f"{newest.per_core:,.0f} records/s per core",
            at_least(newest.per_core, TARGET_PER_CORE),
        ),
        Verdict(
            f"≤ {TARGET_BYTES_PER_TOKEN:g} bytes per logged token with top-5 ({name})",
            f"{newest.bytes_per_token:.1f} bytes",
            at_least(TARGET_BYTES_PER_TOKEN, newest.bytes_per_token),
        ),
    ]


def _stage_lines(run: RecordingRun) -> list[str]:
    if not run.stages:
        return []
    lines = ["| v3 stage | CPU µs/record |", "| --- | ---: |"]
    lines += [f"| {name} | {value:,.0f} |" for name, value in run.stages.items()]
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
    for kind in (V2_KIND, V3_KIND):
        form = run.stored.get(kind)
        if form is not None:
            lines.append(
                f"- {kind.split()[0]} with logprobs: `call_logprobs` {form.bytes_per_token:.1f} "
                f"bytes per logged token ({form.logprob_rows:,} rows); with the `calls` rows "
                f"{form.total_per_token:.1f}."
            )
    v3 = run.stored.get(V3_KIND)
    if v3 is not None:
        lines.append(
            f"- v3's `logprob_vocab` table: {v3.vocab_rows:,} keys, {v3.vocab_bytes / 1024:,.0f} "
            f"KiB ({v3.vocab_bytes / max(v3.logprob_tokens, 1):.2f} bytes per logged token of "
            f"this run; shared by every later call, so it does not grow with the calls)."
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
        "Storage forms, each through a recorder process (CPU seconds of the recorder):",
        "",
        *_form_lines(run),
        "",
        "v3 row building by stage (vocabulary warm; bench/recording/breakdown.py):",
        "",
        *_stage_lines(run),
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
        lines += ["", "Profile of the sink's threads during a v3 burst, in-process (py-spy):", ""]
        lines += hotspot_lines(run.profile)
    return "\n".join(lines) + "\n"
