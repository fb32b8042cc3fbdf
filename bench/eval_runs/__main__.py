"""`python -m bench.eval_runs`: wall time of an eval suite on real workers vs the backend limit.

Starts a simulator of fixed capacity, Postgres, a gateway and `plumbline worker` processes on
Redis (as tests/workers does, with production leases and batch sizes), imports a generated
suite (default 200 questions x 20 wordings x 5 samples) and times runs from `evals.start_run`
to a completed finalisation: with one worker, then two. Then the same with a backend that is
never the limit, to see what a second worker adds. Records the section in docs/benchmarks.md;
`--smoke` runs a tiny suite.
"""

from __future__ import annotations

import argparse

from bench.eval_runs.report import EvalBench, eval_section
from bench.eval_runs.suite import simulator_config, suite_yaml
from bench.eval_runs.timing import RunTiming, timed_run
from bench.harness.header import section_header
from bench.harness.record import DOC, publish
from tests.workers.stack import WorkerStack, worker_stack
from tests.workers.suites import import_yaml

# Production fan-out and leases (tests/workers shortens them); beat is not started.
WORKER_SETTINGS = {
    "batch_size": 50,
    "sample_lease_s": 90,
    "slot_lease_s": 60,
    "finalize_lease_s": 900,
    "stall_after_s": 180,
}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; `--smoke` shrinks everything to seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--wordings", type=int, default=20)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--max-num-seqs", type=int, default=16)
    parser.add_argument("--decode-ms", type=float, default=25.0)
    parser.add_argument("--concurrency", type=int, default=32, help="eval samples in flight")
    parser.add_argument("--wide-questions", type=int, default=50)
    parser.add_argument("--wide-decode-ms", type=float, default=1.0)
    parser.add_argument("--wide-concurrency", type=int, default=256)
    parser.add_argument("--timeout-s", type=float, default=3600.0, help="per run")
    parser.add_argument("--busy", default=None, help="a note on what else ran on the machine")
    parser.add_argument("--doc", default=str(DOC), help="where to record the section")
    parser.add_argument("--no-record", action="store_true", help="print only")
    parser.add_argument("--smoke", action="store_true", help="seconds, for CI")
    args = parser.parse_args(argv)
    if args.smoke:
        args.questions, args.wordings, args.samples, args.wide_questions = 2, 2, 2, 2
        args.decode_ms, args.timeout_s = 5.0, 120.0
    return args


def _limits(stack: WorkerStack, concurrency: int) -> None:
    # Workers read these from their environment at start, so set them before starting any.
    stack.config["eval"].update(concurrency=concurrency, backend_concurrency=concurrency)


def one_then_two(stack: WorkerStack, suite_id: int, timeout_s: float) -> list[RunTiming]:
    """A run with one worker, then one with a second worker added; both stopped after."""
    first = stack.worker(concurrency=2)
    runs = [timed_run(stack, suite_id, [first], timeout_s)]
    second = stack.worker(concurrency=2)
    runs.append(timed_run(stack, suite_id, [first, second], timeout_s))
    second.stop()
    first.stop()
    for run in runs:
        print(f"suite {suite_id}: {run}", flush=True)
    return runs


def measure(args: argparse.Namespace) -> EvalBench:
    """One worker then two on the fixed backend; one then two on a wide one."""
    fixed_config = simulator_config(args.max_num_seqs, args.decode_ms)
    with worker_stack(
        fixed_config, worker=WORKER_SETTINGS, health={"interval_s": 5.0}, recording={}
    ) as stack:
        _limits(stack, args.concurrency)
        size = (args.questions, args.wordings, args.samples)
        fixed = import_yaml(stack.sessions, suite_yaml("fixed-backend", *size))
        fixed_runs = one_then_two(stack, fixed, args.timeout_s)
        wide_timing = {**fixed_config["timing"], "max_num_seqs": 4096}
        stack.simulator.set_timing({**wide_timing, "decode_ms_per_token": args.wide_decode_ms})
        _limits(stack, args.wide_concurrency)
        size = (args.wide_questions, args.wordings, args.samples)
        wide = import_yaml(stack.sessions, suite_yaml("wide-backend", *size))
        wide_runs = one_then_two(stack, wide, args.timeout_s)
    return EvalBench(fixed_runs, wide_runs)


def main(argv: list[str] | None = None) -> str:
    """Run, print and record; returns the section."""
    args = parse(argv)
    notes = [
        "Each `plumbline worker` runs Celery's default pool of 2 processes, each with one event "
        "loop and gateway client for all its batches; batches of 50 samples, each batch with "
        "async concurrency inside, limits shared through Redis. Every "
        "sample is a gateway call recorded with top-5 logprobs; wall time runs from sending "
        "`evals.start_run` to the finalisation (scoring and alert decision) being stored."
    ]
    header = section_header("bench.eval_runs", notes, busy=args.busy)
    section = eval_section(header, measure(args), args)
    return publish("Evals: suite wall time on workers", "evals", section, args)


if __name__ == "__main__":
    main()
