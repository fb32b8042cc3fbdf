"""The simulator's `scheduling_policy: priority` admits the most urgent queued request first."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import openai
import pytest
from openai import Stream
from openai.types.chat import ChatCompletionChunk
from pydantic import ValidationError

from simulator.config import SimulatorConfig
from simulator.process import SimulatorProcess
from tests.support.waiting import wait_until

# One sequence at a time, slow enough that the queue holds still while the test looks.
ONE_AT_A_TIME = {"max_num_seqs": 1, "decode_ms_per_token": 300.0, "prefill_ms_per_token": 0.0}


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": ONE_AT_A_TIME}) as process:
        yield process


def _stream(
    client: openai.OpenAI, name: str, priority: int, held: ExitStack
) -> Stream[ChatCompletionChunk]:
    stream = client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": name}],
        max_tokens=1000,
        stream=True,
        extra_headers={"X-Request-Id": name},
        extra_body={"ignore_eos": True, "priority": priority},
    )
    return held.enter_context(stream)


def _written(sim: SimulatorProcess, name: str) -> bool:
    return bool(sim.timeline(f"chatcmpl-{name}")["token_writes"])


@pytest.mark.parametrize(("policy", "first"), [("priority", "urgent"), ("fcfs", "early")])
def test_the_next_request_to_run_follows_the_policy(
    sim: SimulatorProcess, policy: str, first: str
) -> None:
    sim.set_timing({**ONE_AT_A_TIME, "scheduling_policy": policy})
    client = openai.OpenAI(base_url=f"{sim.base_url}/v1", api_key="sim", max_retries=0)
    with client, ExitStack() as held:
        running = _stream(client, f"running-{policy}", 0, held)
        wait_until(lambda: _written(sim, f"running-{policy}"), timeout=20, what="one to run")
        _stream(client, f"early-{policy}", 20, held)
        _stream(client, f"urgent-{policy}", 0, held)
        wait_until(lambda: sim.stats()["engine"]["waiting"] == 2, timeout=20, what="two to queue")
        running.close()
        wait_until(
            lambda: _written(sim, f"{first}-{policy}"), timeout=20, what=f"{first} to run next"
        )
        other = "early" if first == "urgent" else "urgent"
        assert not _written(sim, f"{other}-{policy}")


def test_the_policy_is_vllms_flag_and_nothing_else() -> None:
    with pytest.raises(ValidationError):
        SimulatorConfig.load(None, {"timing.scheduling_policy": "lifo"})
    with SimulatorProcess(extra_args=["--scheduling-policy", "priority"]) as flagged:
        assert flagged.client.get("/_sim/timing").json()["scheduling_policy"] == "priority"
