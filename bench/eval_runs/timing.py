"""Run a suite on the workers and read back how long it took and how many tokens it decoded."""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import func, select

from bench.eval_runs.cpu import CpuMeter, CpuUse
from evals.runs.creation import create_run
from evals.transaction import in_transaction
from plumbline.models import EvalRunFinalization, EvalSample
from tests.workers.processes import CeleryProcess
from tests.workers.stack import WorkerStack, wait_for


@dataclass(frozen=True)
class RunTiming:
    """Wall time from start to finalised, the sample phase, samples, decoded tokens, CPU."""

    workers: int
    wall_s: float
    samples_s: float
    samples: int
    done: int
    tokens: int
    cpu: CpuUse | None = None

    @property
    def per_second(self) -> float:
        """Samples finished per second of wall time."""
        return self.done / self.wall_s


def _finalised(stack: WorkerStack, run_id: int) -> bool:
    with stack.sessions() as session:
        done = session.get(EvalRunFinalization, run_id)
        return done is not None and done.completed_at is not None


def timed_run(
    stack: WorkerStack, suite_id: int, workers: list[CeleryProcess], timeout_s: float
) -> RunTiming:
    """Create a run, start it on the workers, wait until it is scored; its timing and CPU."""
    run_id = in_transaction(stack.sessions, create_run, suite_id, team_id=None).run_id
    meter = CpuMeter(stack, workers)
    meter.start()
    started = time.monotonic()
    stack.send("evals.start_run", run_id)
    wait_for(lambda: _finalised(stack, run_id), timeout_s, f"run {run_id} finalised", stack)
    wall = time.monotonic() - started
    cpu = meter.stop()
    with stack.sessions() as session:
        first, last, samples, done, tokens = session.execute(
            select(
                func.min(EvalSample.claimed_at),
                func.max(EvalSample.finished_at),
                func.count(),
                func.count().filter(EvalSample.status == "done"),
                func.coalesce(func.sum(EvalSample.completion_tokens), 0),
            ).where(EvalSample.run_id == run_id)
        ).one()
    span = (last - first).total_seconds() if first and last else float("nan")
    counts = int(samples or 0), int(done or 0), int(tokens or 0)
    return RunTiming(len(workers), wall, span, *counts, cpu=cpu)


def backend_limit_s(tokens: int, sequences: int, max_num_seqs: int, decode_ms: float) -> float:
    """The backend alone at best: every decode step full, paid steps / capacity x step time."""
    # A sequence's first token comes out of its prefill step, which costs nothing here (no
    # prefill cost): a step whose sequences were all just admitted is free in the simulator, as
    # a prefill-only batch costs only prefill in vLLM. So only the later tokens pay a step.
    steps = -(-(tokens - sequences) // max_num_seqs)
    return steps * decode_ms / 1000
