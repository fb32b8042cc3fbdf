"""With VLLM_ENABLE_RESPONSES_API_STORE=1: retrieve, cancel, background and previous_response_id
on the real vLLM and on a simulator with `enable_responses_store`, compared; then through a
gateway with `responses_store: true`, where each stored response is its team's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest
from openai.types.responses import Response

from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.waiting import wait_for
from tests.vllm.route_differential import compare_all, simulator_like
from tests.vllm.runners.servers import launched_server

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]


@pytest.fixture(scope="module")
def store_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    """A real vLLM that keeps its responses."""
    yield from launched_server(request, tmp_path_factory, "--responses-store")


def test_stored_responses_match_the_simulator(store_server: httpx.Client) -> None:
    with simulator_like("store") as simulated:
        found = compare_all("store", store_server, simulated)
    assert not found, "\n".join(found[:30])


def test_stored_responses_through_the_gateway_are_the_teams(store_server: httpx.Client) -> None:
    backend = str(store_server.base_url).rstrip("/")
    config = gateway_config(backend)
    config["models"] = [{**config["models"][0], "responses_store": True}]
    with postgres_database("plumbline_vllm_store") as database:
        keys = {team: issue_key(database, team) for team in ("alpha", "beta")}
        gateway = GatewayProcess(config, database)
        with (
            gateway,
            openai.OpenAI(
                base_url=f"{gateway.url}/v1", api_key=keys["alpha"], max_retries=0
            ) as alpha,
            openai.OpenAI(
                base_url=f"{gateway.url}/v1", api_key=keys["beta"], max_retries=0
            ) as beta,
        ):
            created = alpha.responses.create(
                model="tiny", input="Say hi.", max_output_tokens=6, temperature=0
            )
            # vLLM itself holds it, under the id the gateway chose and recorded.
            assert store_server.get(f"/v1/responses/{created.id}").json()["id"] == created.id
            retrieved = alpha.responses.retrieve(created.id)
            assert retrieved.output_text == created.output_text
            assert retrieved.top_logprobs is None  # the gateway's own logprobs stripped again
            chained = alpha.responses.create(
                model="tiny", input="Again.", previous_response_id=created.id, max_output_tokens=4
            )
            assert chained.usage is not None and created.usage is not None
            assert chained.usage.input_tokens > created.usage.input_tokens
            queued = alpha.responses.create(
                model="tiny", input="Count.", max_output_tokens=6, background=True
            )

            def finished() -> tuple[Response, str] | None:
                raw = alpha.responses.with_raw_response.retrieve(queued.id)
                found = raw.parse()
                if found.status in ("queued", "in_progress"):
                    return None
                return found, raw.headers["x-plumbline-call-id"]

            done, settling = wait_for(finished, timeout=120, what="the background response")
            assert done.usage is not None
            reader = CallReader(database)
            try:
                # The first retrieve that saw it finished carries its tokens, once.
                assert reader.wait(settling).completion_tokens == done.usage.output_tokens
            finally:
                reader.close()
            # vLLM's own 404 for an id it never saw is what another team gets for alpha's.
            unknown = store_server.get("/v1/responses/resp_0123456789abcdef0123456789abcdef")
            with httpx.Client(
                base_url=gateway.url, headers={"Authorization": f"Bearer {keys['beta']}"}
            ) as raw_beta:
                stolen = raw_beta.get(f"/v1/responses/{created.id}")
            assert stolen.status_code == unknown.status_code == 404
            assert stolen.content == unknown.content.replace(
                b"resp_0123456789abcdef0123456789abcdef", created.id.encode()
            )
            with pytest.raises(openai.NotFoundError):
                beta.responses.cancel(queued.id)
            with pytest.raises(openai.NotFoundError):
                beta.responses.create(model="tiny", input="x", previous_response_id=created.id)
