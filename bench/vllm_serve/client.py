"""One run of vLLM's own serving benchmark client (scripts/vllm-bench-serve) against one side."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.proxies.installed import ROOT, vllm_python

WRAPPER = ROOT / "scripts" / "vllm-bench-serve"
METRICS = ("ttft", "tpot", "itl", "e2el")
PERCENTILES = ("50", "90", "99")
# Long enough for every request of a full-size run to finish on a busy machine.
CLIENT_TIMEOUT_S = 1800


@dataclass(frozen=True)
class Workload:
    """What every side is sent: vLLM's random dataset at a fixed Poisson rate, seeded."""

    requests: int
    rate: float
    input_len: int
    output_len: int
    warmups: int
    seed: int
    tokenizer: str


def client_command(
    base_url: str, extra_body: dict[str, Any], work: Workload, out: Path
) -> list[str]:
    """The wrapper's command line for one run, results saved as `out` (JSON)."""
    command = [str(vllm_python()), str(WRAPPER), "--backend", "openai-chat"]
    command += ["--base-url", base_url, "--endpoint", "/v1/chat/completions"]
    command += ["--model", "tiny", "--served-model-name", "tiny", "--tokenizer", work.tokenizer]
    command += ["--dataset-name", "random", "--num-prompts", str(work.requests)]
    command += ["--random-input-len", str(work.input_len)]
    command += ["--random-output-len", str(work.output_len), "--ignore-eos"]
    command += ["--request-rate", str(work.rate), "--seed", str(work.seed)]
    command += ["--num-warmups", str(work.warmups), "--temperature", "0", "--disable-tqdm"]
    command += ["--percentile-metrics", ",".join(METRICS)]
    command += ["--metric-percentiles", ",".join(PERCENTILES)]
    command += ["--save-result", "--result-dir", str(out.parent), "--result-filename", out.name]
    if extra_body:
        command += ["--extra-body", json.dumps(extra_body)]
    return command


def run_client(
    base_url: str, api_key: str | None, extra_body: dict[str, Any], work: Workload, out: Path
) -> dict[str, Any]:
    """Run the client to completion and return its saved result (figures in ms)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.pop("OPENAI_API_KEY", None)
    if api_key:
        # vLLM's client sends $OPENAI_API_KEY as a bearer token; no flag leaks it into ps.
        env["OPENAI_API_KEY"] = api_key
    command = client_command(base_url, extra_body, work, out)
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, check=False
    )
    # The client's own printout (its summary, tokenizer warnings) beside the result.
    out.with_suffix(".log").write_text(done.stdout + done.stderr)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(
            f"vLLM's benchmark client failed (rc={done.returncode}) against {base_url}:\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    result: dict[str, Any] = json.loads(out.read_text())
    return result
