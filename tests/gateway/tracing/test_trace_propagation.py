"""W3C trace context through a real gateway: what reaches the backend, what the row keeps.

The backend is a loopback listener the test owns, so the headers the gateway sent can be read
exactly (the simulator does not record request headers).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import openai
import pytest

from plumbline.models import Call
from tests.gateway.tracing.replies import BODY, CHAT_REPLY, CLIENT_SPAN, TRACE
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.listener import Heard, Listener
from tests.support.otlp_receiver import free_port_url

pytestmark = pytest.mark.xdist_group("gateway-trace-context")


@dataclass
class World:
    """Two gateways on one backend and database: tracing on (the default) and off."""

    traced: GatewayProcess
    untraced: GatewayProcess
    backend: Listener
    calls: CallReader
    keys: dict[str, str]

    def send(
        self, headers: Sequence[tuple[str, str | bytes]], gateway: GatewayProcess | None = None
    ) -> tuple[Heard, Call]:
        """One chat call with `headers` (repeats allowed): what went upstream and its row."""
        target = gateway or self.traced
        response = httpx.post(
            f"{target.url}/v1/chat/completions",
            json=BODY,
            headers=[
                (b"authorization", f"Bearer {self.keys['alpha']}".encode()),
                *((n.encode(), v if isinstance(v, bytes) else v.encode()) for n, v in headers),
            ],
            timeout=30,
        )
        assert response.status_code == 200, response.text
        call_id = response.headers["x-plumbline-call-id"]
        row = self.calls.wait(call_id)
        return self.upstream(row.request_id), row

    def upstream(self, request_id: str) -> Heard:
        """The request the backend got for the call with `request_id`."""
        heard = [h for h in self.backend.requests() if h.headers.get("X-Request-Id") == request_id]
        assert len(heard) == 1
        return heard[0]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with ExitStack() as exits:
        backend = exits.enter_context(Listener(body=CHAT_REPLY))
        url = exits.enter_context(postgres_database("plumbline_trace_context"))
        keys = {"alpha": issue_key(url, "alpha"), "beta": issue_key(url, "beta")}
        config = gateway_config(backend.url)
        on = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": free_port_url()}
        traced = GatewayProcess(config, url, env=on)
        # No exporter configured, as by default: no gateway span, the client's context passes on.
        untraced = GatewayProcess(config, url)
        exits.enter_context(traced)
        exits.enter_context(untraced)
        calls = CallReader(url)
        exits.callback(calls.close)
        yield World(traced, untraced, backend, calls, keys)


def _traceparent(heard: Heard) -> list[str]:
    parts = heard.headers["traceparent"].split("-")
    assert len(parts) == 4 and parts[0] == "00"
    return parts


def test_the_upstream_request_is_a_child_of_the_gateway_span_in_the_clients_trace(
    world: World,
) -> None:
    client = openai.OpenAI(
        base_url=f"{world.traced.url}/v1", api_key=world.keys["alpha"], max_retries=0
    )
    raw = client.chat.completions.with_raw_response.create(
        model="tiny",
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={
            "traceparent": f"00-{TRACE}-{CLIENT_SPAN}-01",
            "tracestate": "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
        },
    )
    assert raw.parse().choices[0].message.content == "ok"
    # Trace Context Level 1 defines request headers only: the reply carries nothing new.
    assert "traceparent" not in raw.headers and "traceresponse" not in raw.headers
    row = world.calls.wait(raw.headers["x-plumbline-call-id"])
    heard = world.upstream(row.request_id)
    _, trace_id, span_id, flags = _traceparent(heard)
    assert (trace_id, flags) == (TRACE, "01")
    assert span_id != CLIENT_SPAN and len(span_id) == 16
    assert heard.headers["tracestate"] == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"
    assert (row.trace_id, row.span_id) == (trace_id, span_id)


def test_without_a_traceparent_the_gateway_starts_a_sampled_trace(world: World) -> None:
    heard, row = world.send([("tracestate", "orphan=1")])
    _, trace_id, span_id, flags = _traceparent(heard)
    assert trace_id != TRACE and trace_id != "0" * 32 and flags == "01"
    # A tracestate without a valid traceparent belongs to no trace: it is dropped.
    assert "tracestate" not in heard.headers
    assert (row.trace_id, row.span_id) == (trace_id, span_id)


def test_an_unsampled_client_trace_stays_unsampled(world: World) -> None:
    heard, row = world.send([("traceparent", f"00-{TRACE}-{CLIENT_SPAN}-00")])
    _, trace_id, _, flags = _traceparent(heard)
    assert (trace_id, flags) == (TRACE, "00") and row.trace_id == TRACE


def test_each_call_is_its_own_gateway_span(world: World) -> None:
    parent = [("traceparent", f"00-{TRACE}-{CLIENT_SPAN}-01")]
    spans = {_traceparent(world.send(parent)[0])[2] for _ in range(3)}
    assert len(spans) == 3


@pytest.mark.parametrize(
    "value",
    [
        f"00-{TRACE.upper()}-{CLIENT_SPAN}-01",
        f"00-{'0' * 32}-{CLIENT_SPAN}-01",
        f"00-{TRACE}-{'0' * 16}-01",
        f"ff-{TRACE}-{CLIENT_SPAN}-01",
        f"00-{TRACE}-{CLIENT_SPAN}-01-x",
        f"00-{TRACE}-{CLIENT_SPAN}-01" + "9" * 4000,
        "\xff" * 60,  # obs-text: the HTTP server lets it through, the gateway does not
    ],
)
def test_an_invalid_traceparent_starts_a_new_trace_and_drops_tracestate(
    world: World, value: str
) -> None:
    heard, row = world.send([("traceparent", value.encode("latin-1")), ("tracestate", "rojo=1")])
    _, trace_id, _, _ = _traceparent(heard)
    assert trace_id != TRACE and row.trace_id == trace_id
    assert "tracestate" not in heard.headers


def test_two_traceparent_headers_start_a_new_trace(world: World) -> None:
    value = f"00-{TRACE}-{CLIENT_SPAN}-01"
    heard, _ = world.send([("traceparent", value), ("traceparent", value)])
    assert _traceparent(heard)[1] != TRACE


def test_a_future_version_joins_the_trace_and_goes_upstream_as_version_00(world: World) -> None:
    heard, _ = world.send([("traceparent", f"cc-{TRACE}-{CLIENT_SPAN}-01-future")])
    assert _traceparent(heard)[1] == TRACE


def test_an_oversized_tracestate_is_cut_to_its_bounds(world: World) -> None:
    members = ",".join(f"k{i}=" + "v" * 30 for i in range(40))
    heard, _ = world.send(
        [("traceparent", f"00-{TRACE}-{CLIENT_SPAN}-01"), ("tracestate", members + ",BAD=1")]
    )
    sent = heard.headers["tracestate"]
    assert len(sent) <= 512 and sent.count(",") < 32 and "BAD" not in sent
    assert sent.startswith("k0=")


def test_the_read_api_finds_a_call_by_its_trace_for_its_own_team_only(world: World) -> None:
    _, row = world.send([])
    assert row.trace_id is not None

    def find(who: str, trace_id: str) -> httpx.Response:
        return httpx.get(
            f"{world.traced.url}/api/calls",
            params={"trace_id": trace_id},
            headers={"Authorization": f"Bearer {world.keys[who]}"},
            timeout=30,
        )

    found = find("alpha", row.trace_id).json()["data"]
    assert [(c["id"], c["trace_id"], c["span_id"]) for c in found] == [
        (row.id, row.trace_id, row.span_id)
    ]
    assert find("beta", row.trace_id).json()["data"] == []
    refused = find("alpha", row.trace_id.upper())
    assert refused.status_code == 400
    assert refused.json()["error"]["param"] == "query.trace_id"
    detail = httpx.get(
        f"{world.traced.url}/api/calls/{row.id}",
        headers={"Authorization": f"Bearer {world.keys['alpha']}"},
        timeout=30,
    ).json()
    assert (detail["trace_id"], detail["span_id"]) == (row.trace_id, row.span_id)


def test_tracing_off_passes_the_clients_headers_unchanged_and_records_nothing(
    world: World,
) -> None:
    sent = [("traceparent", f"00-{TRACE.upper()}-{CLIENT_SPAN}-01"), ("tracestate", "Odd=1")]
    heard, row = world.send(sent, world.untraced)
    assert heard.headers["traceparent"] == sent[0][1]
    assert heard.headers["tracestate"] == "Odd=1"
    assert (row.trace_id, row.span_id) == (None, None)
    heard, row = world.send([], world.untraced)
    assert "traceparent" not in heard.headers and row.trace_id is None


def test_tracing_off_forwards_only_visible_ascii(world: World) -> None:
    # Control characters never get past the HTTP server; obs-text does, and stops here.
    heard, row = world.send([("traceparent", b"00-\xff\xfe-x")], world.untraced)
    assert "traceparent" not in heard.headers and row.trace_id is None
    refused = httpx.post(
        f"{world.untraced.url}/v1/chat/completions",
        json=BODY,
        headers={"Authorization": f"Bearer {world.keys['alpha']}", "traceparent": "00-\x01-x"},
        timeout=30,
    )
    assert refused.status_code == 400
