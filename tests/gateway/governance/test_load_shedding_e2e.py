"""Load shedding and vLLM priority through a real gateway, the openai SDK and the simulator.

The simulator runs one sequence at a time with a slow decode, so the streams a test holds open
queue in its engine (vllm:num_requests_waiting). Each step waits for the gateway to have
scraped the queue the test built, then checks which calls are shed, in which order, and why.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import openai
import pytest
from openai import Stream
from openai.types.chat import ChatCompletionChunk

from bench.routing.counters import sample_sum
from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.waiting import wait_until

HELLO = [{"role": "user", "content": "hello"}]
PRIORITIES = {"product": 0, "eval": 20, "live_sample": 30, "over_share": 5}
RETRY_AFTER = 7
# One running, the rest queued: the queue is what the gateway sheds by.
SLOW = {"max_num_seqs": 1, "decode_ms_per_token": 400.0, "prefill_ms_per_token": 0.0}
FAST = {"max_num_seqs": 256, "decode_ms_per_token": 1.0}


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def simulator() -> Iterator[SimulatorProcess]:
    with SimulatorProcess({"timing": FAST}) as sim:
        yield sim


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    config = gateway_config(simulator.base_url, health={"interval_s": 0.2, "timeout_s": 1.0})
    shed = config["models"][0]
    shed.update(
        priority_scheduling=True,
        priorities=PRIORITIES,
        shedding={
            "queue_depth": 4,
            "kv_cache_usage": None,
            "background_at": 0.5,
            "retry_after_s": RETRY_AFTER,
        },
    )
    # The same backend without priority scheduling: a client's priority passes as it did.
    plain = {"name": "plain", "upstream_model": "tiny", "backends": shed["backends"]}
    config["models"].append(plain)
    with GatewayProcess(config, database) as process:
        yield process


@pytest.fixture(scope="module")
def keys(database: str) -> dict[str, str]:
    return {
        "team-a": issue_key(database, "team-a"),
        "team-b": issue_key(database, "team-b"),
        "platform": issue_key(database, "platform", admin=True),
    }


@pytest.fixture(scope="module")
def clients(gateway: GatewayProcess, keys: dict[str, str]) -> Iterator[dict[str, openai.OpenAI]]:
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(
                openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0)
            )
            for name, key in keys.items()
        }


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


def _labels(kind: str) -> dict[str, str]:
    """Headers the eval workers and the resampler send, acting for team-b."""
    feature = {"eval": "eval:contracts", "live_sample": "resample:chat"}[kind]
    return {"X-Plumbline-Feature": feature, "X-Plumbline-Team": "team-b"}


def _chat(client: openai.OpenAI, headers: dict[str, str] | None = None, **extra: Any) -> Any:
    return client.chat.completions.create(
        model=extra.pop("model", "tiny"),
        messages=HELLO,  # type: ignore[arg-type]
        max_tokens=2,
        extra_headers=headers or {},
        extra_body=extra,
    )


def _shed(client: openai.OpenAI, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as raised:
        _chat(client, headers)
    return raised.value


def _gauge(gateway: GatewayProcess, backend: str, name: str) -> float:
    """A vLLM gauge of the simulator as the gateway last scraped it."""
    page = httpx.get(f"{gateway.url}/metrics").text
    # `plain` is served by the same backend (and scraped apart): only `tiny`'s.
    return sample_sum(page, "plumbline_backend_engine", f'{backend},gauge="{name}",model="tiny"')


def _metric(gateway: GatewayProcess, name: str, labels: str) -> float:
    return sample_sum(httpx.get(f"{gateway.url}/metrics").text, name, labels)


def _hold(
    client: openai.OpenAI, held: ExitStack, headers: dict[str, str] | None = None
) -> Stream[ChatCompletionChunk]:
    """A stream the slow simulator runs or queues until the test lets it go."""
    stream = client.chat.completions.create(
        model="tiny",
        messages=HELLO,  # type: ignore[arg-type]
        max_tokens=1000,  # 400 s at the slow decode: held for the whole test
        stream=True,
        extra_headers=headers or {},
        extra_body={"ignore_eos": True, "priority": 3},
    )
    return held.enter_context(stream)


def _engine_holds(simulator: SimulatorProcess, gateway: GatewayProcess, waiting: int) -> None:
    """Wait until one stream runs and `waiting` queue, at the simulator and as scraped."""

    def at_simulator() -> bool:
        engine = simulator.stats()["engine"]
        return bool(engine["running"] == 1 and engine["waiting"] == waiting)

    wait_until(at_simulator, timeout=20, what=f"1 running and {waiting} queued at the simulator")
    backend = f'backend="{simulator.base_url}"'
    wait_until(
        lambda: (
            _gauge(gateway, backend, "running") == 1
            and _gauge(gateway, backend, "waiting") == waiting
        ),
        timeout=20,
        what=f"the gateway to scrape {waiting} queued",
    )


def _first_id(stream: Stream[ChatCompletionChunk]) -> str:
    """The response id of a held stream, once it runs."""
    return next(iter(stream)).id


def test_the_gateway_sets_priority_by_source_over_the_clients(
    clients: dict[str, openai.OpenAI], simulator: SimulatorProcess
) -> None:
    team, platform = clients["team-b"], clients["platform"]
    product = _chat(team, priority=3)
    assert simulator.timeline(product.id)["priority"] == PRIORITIES["product"]
    for kind in ("eval", "live_sample"):
        answer = _chat(platform, _labels(kind), priority=-50)
        assert simulator.timeline(answer.id)["priority"] == PRIORITIES[kind]
    # A model whose backends do not schedule by priority: the client's value passes, as before.
    plain = _chat(team, model="plain", priority=3)
    assert simulator.timeline(plain.id)["priority"] == 3


@pytest.mark.parametrize("sent", ["7", 7.0, True, 2**62])
def test_whatever_priority_a_client_sends_the_gateway_sets_its_own(
    clients: dict[str, openai.OpenAI], simulator: SimulatorProcess, sent: object
) -> None:
    answer = _chat(clients["team-b"], priority=sent)
    assert simulator.timeline(answer.id)["priority"] == PRIORITIES["product"]


@pytest.mark.parametrize("sent", ["-5", -(2**63), 2**70, None, [1], {"p": 1}])
def test_a_priority_vllm_would_refuse_or_a_jump_is_still_a_400(
    clients: dict[str, openai.OpenAI], sent: object
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        _chat(clients["team-a"], priority=sent)
    assert "priority" in raised.value.message


def test_a_team_key_still_cannot_send_a_negative_priority(
    clients: dict[str, openai.OpenAI],
) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        _chat(clients["team-a"], priority=-1)
    assert "priority" in raised.value.message


def test_product_calls_run_before_queued_eval_calls_under_priority_scheduling(
    clients: dict[str, openai.OpenAI], simulator: SimulatorProcess, gateway: GatewayProcess
) -> None:
    simulator.set_timing({**SLOW, "scheduling_policy": "priority"})
    try:
        with ExitStack() as held:
            running = _hold(clients["team-a"], held)
            _engine_holds(simulator, gateway, waiting=0)
            # Queued first, but the gateway gave it eval's priority (the client asked for 3).
            queued_eval = _hold(clients["platform"], held, _labels("eval"))
            product = _hold(clients["team-b"], held)
            wait_until(
                lambda: simulator.stats()["engine"]["waiting"] == 2, timeout=20, what="2 queued"
            )
            running.close()
            # The product call runs next: its first token comes while the eval call waits.
            assert _first_id(product)
            assert simulator.stats()["engine"]["waiting"] == 1
            queued_eval.close()
    finally:
        simulator.set_timing(FAST)


def test_overload_sheds_background_first_then_the_team_over_its_share(
    clients: dict[str, openai.OpenAI],
    simulator: SimulatorProcess,
    gateway: GatewayProcess,
    calls: CallReader,
) -> None:
    team_a, team_b, platform = clients["team-a"], clients["team-b"], clients["platform"]
    simulator.set_timing(SLOW)
    shed: dict[str, openai.APIStatusError] = {}
    try:
        with ExitStack() as held:
            early = [_hold(team_a, held) for _ in range(3)] + [_hold(team_b, held)]
            _engine_holds(simulator, gateway, waiting=3)
            # 3 queued of 4: over `background_at`, under the threshold. Eval and resample
            # calls are shed; team-a, above its share (3 of 4), is still served.
            for kind in ("eval", "live_sample"):
                shed[kind] = _shed(platform, _labels(kind))
            over_admitted = _hold(team_a, held)
            _engine_holds(simulator, gateway, waiting=4)
            # Saturated: team-a (5 of 6 with this call, share 3) is shed; team-b never.
            shed["over_fair_share"] = _shed(team_a)
            # A stream is shed before it starts: a JSON 503, not an event in a stream.
            with pytest.raises(openai.APIStatusError) as streamed:
                platform.chat.completions.create(
                    model="tiny", messages=HELLO, stream=True, extra_headers=_labels("eval")
                )
            assert streamed.value.status_code == 503
            assert streamed.value.response.headers["content-type"] == "application/json"
            within = _hold(team_b, held)
            simulator.set_timing(FAST)
            priorities = {
                name: simulator.timeline(_first_id(stream))["priority"]
                for name, stream in (("early", early[0]), ("over", over_admitted), ("b", within))
            }
    finally:
        simulator.set_timing(FAST)
    assert priorities == {"early": 0, "over": PRIORITIES["over_share"], "b": 0}
    for reason, error in shed.items():
        assert error.status_code == 503
        assert error.response.headers["retry-after"] == str(RETRY_AFTER)
        assert error.response.headers["x-plumbline-shed"] == reason
        assert f"Retry after {RETRY_AFTER} s" in error.message
        call = calls.wait(error.response.headers["x-plumbline-call-id"])
        assert (call.status_code, call.shed_reason) == (503, reason)
        assert call.error_type == "ServiceUnavailableError"
    expected = {"eval": 2, "live_sample": 1, "over_fair_share": 1}
    for reason, count in expected.items():
        assert _metric(gateway, "plumbline_shed_total", f'reason="{reason}"') == count
    assert "team `team-a` is above its fair share" in shed["over_fair_share"].message
    assert "overloaded" in shed["eval"].message
