"""X-Plumbline-Trace-Link, played by an attacker: admin keys only, read by traceparent's rules,
never forwarded upstream; an admin's valid link is a span link on the call's own span."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

import httpx
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from plumbline.models import Call
from tests.gateway.tracing.replies import BODY, CHAT_REPLY, CLIENT_SPAN, TRACE
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.listener import Heard, Listener
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.waiting import wait_for

pytestmark = pytest.mark.xdist_group("gateway-trace-link")
LINK = f"00-{TRACE}-{CLIENT_SPAN}-01"
HEADER = "X-Plumbline-Trace-Link"
EVAL = ("X-Plumbline-Feature", "eval:contracts")


@dataclass
class World:
    """A traced gateway on a listener backend, its collector, and an admin and a team key."""

    gateway: GatewayProcess
    backend: Listener
    collector: OtlpReceiver
    calls: CallReader
    keys: dict[str, str]

    def send(self, key: str, headers: Sequence[tuple[str, str | bytes]]) -> httpx.Response:
        """One chat call with `key` and `headers` (repeats allowed)."""
        return httpx.post(
            f"{self.gateway.url}/v1/chat/completions",
            json=BODY,
            headers=[
                (b"authorization", f"Bearer {self.keys[key]}".encode()),
                *((n.encode(), v if isinstance(v, bytes) else v.encode()) for n, v in headers),
            ],
            timeout=30,
        )

    def served(self, headers: Sequence[tuple[str, str | bytes]]) -> tuple[Span, Call, Heard]:
        """An admin's call: its exported span, its row and what went upstream."""
        response = self.send("ops", [EVAL, ("X-Plumbline-Team", "alpha"), *headers])
        assert response.status_code == 200, response.text
        call_id = response.headers["x-plumbline-call-id"]
        row = self.calls.wait(call_id)
        got = wait_for(lambda: self.collector.span_of(call_id), timeout=30, what="the span")
        (heard,) = [
            h for h in self.backend.requests() if h.headers.get("X-Request-Id") == row.request_id
        ]
        return got.span, row, heard


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with ExitStack() as exits:
        backend = exits.enter_context(Listener(body=CHAT_REPLY))
        collector = exits.enter_context(OtlpReceiver())
        url = exits.enter_context(postgres_database("plumbline_trace_link"))
        keys = {"ops": issue_key(url, "ops", admin=True), "alpha": issue_key(url, "alpha")}
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.url, "OTEL_BSP_SCHEDULE_DELAY": "20"}
        gateway = exits.enter_context(GatewayProcess(gateway_config(backend.url), url, env=env))
        calls = CallReader(url)
        exits.callback(calls.close)
        yield World(gateway, backend, collector, calls, keys)


@pytest.mark.parametrize(("flags", "sampled"), [("01", 1), ("00", 0)])
def test_an_admins_link_is_a_remote_span_link_on_the_calls_own_span(
    world: World, flags: str, sampled: int
) -> None:
    span, row, heard = world.served([(HEADER, f"00-{TRACE}-{CLIENT_SPAN}-{flags}")])
    (link,) = span.links
    assert (link.trace_id.hex(), link.span_id.hex()) == (TRACE, CLIENT_SPAN)
    assert link.flags == sampled | 0x100 | 0x200
    # A link, not a parent: the call is a trace of its own.
    assert row.trace_id == span.trace_id.hex() != TRACE and span.parent_span_id == b""
    assert not [name for name in heard.headers if name.lower() == HEADER.lower()]


def test_the_link_header_is_never_forwarded_upstream(world: World) -> None:
    _, _, heard = world.served([(HEADER, LINK)])
    assert not [name for name in heard.headers if "plumbline" in name.lower()]
    assert LINK not in str(heard.headers) and TRACE not in heard.headers["traceparent"]


@pytest.mark.parametrize(
    "value",
    [
        LINK,
        "garbage",
        "",
        f"00-{TRACE}-{CLIENT_SPAN}-01" + "0" * 9000,
    ],
)
def test_a_team_key_cannot_link_its_calls_to_a_run(world: World, value: str) -> None:
    response = world.send("alpha", [(HEADER, value)])
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["param"] == HEADER and "admin key" in error["message"]
    row = world.calls.wait(response.headers["x-plumbline-call-id"])
    assert row.status_code == 403 and row.team_id is not None and row.source == "product"
    sent = [h for h in world.backend.requests() if h.headers.get("X-Request-Id") == row.request_id]
    assert sent == []


@pytest.mark.parametrize(
    "values",
    [
        [f"00-{TRACE.upper()}-{CLIENT_SPAN}-01"],
        [f"00-{'0' * 32}-{CLIENT_SPAN}-01"],
        [f"00-{TRACE}-{'0' * 16}-01"],
        [f"ff-{TRACE}-{CLIENT_SPAN}-01"],
        [f"00-{TRACE}-{CLIENT_SPAN}-01-extra"],
        [f"00-{TRACE}-{CLIENT_SPAN}-1"],
        [f"00-{TRACE}-{CLIENT_SPAN}-01" + "-0" * 5000],
        ["x" * 20_000],
        [LINK, LINK],
        [LINK, f"00-{'1' * 32}-{CLIENT_SPAN}-01"],
        [b"00-\xff" + LINK[4:].encode()],
    ],
    ids=[
        "uppercase",
        "zero-trace",
        "zero-span",
        "version-ff",
        "v00-extra-fields",
        "short-flags",
        "oversized",
        "huge-garbage",
        "twice",
        "two-different",
        "non-ascii",
    ],
)
def test_a_malformed_link_is_ignored_as_an_invalid_traceparent_is(
    world: World, values: list[str | bytes]
) -> None:
    span, row, heard = world.served([(HEADER, v) for v in values])
    assert list(span.links) == [] and row.status_code == 200
    assert not [name for name in heard.headers if name.lower() == HEADER.lower()]


def test_a_later_version_is_read_by_version_00s_rules(world: World) -> None:
    span, _, _ = world.served([(HEADER, f"01-{TRACE}-{CLIENT_SPAN}-01-future")])
    (link,) = span.links
    assert link.span_id.hex() == CLIENT_SPAN
