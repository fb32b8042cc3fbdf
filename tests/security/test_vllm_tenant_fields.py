"""vLLM's own request fields that let one team reach another, through a real gateway.

One vLLM serves every team: its prefix cache, queue, KV-transfer connector, extensions and media
fetcher are shared. The gateway salts the prefix cache per team, refuses queue-jumping
priorities from team keys, refuses engine-steering fields, and refuses media URLs that the GPU
host would fetch from inside the serving network (a listener the test owns plays that target).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from simulator.process import SimulatorProcess
from tests.security.stack import SecurityStack
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("security-tenant-fields")
CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
ALLOWED_MEDIA_HOST = "media.example"
# Long enough for several of the simulator's 16-token cache blocks.
LONG = (
    "The indemnity clause of the master services agreement between the parties covers "
    "losses, damages, liabilities, costs and expenses arising from third-party claims, "
    "and survives termination for a period of five years. Question {tag}:"
)
PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"


class Listener:
    """An HTTP server standing for an internal host; counts every request it gets."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                listener.hits.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def stack() -> Iterator[SecurityStack]:
    """Gateway on a simulator; the model allows http(s) media only from one host."""
    with ExitStack() as exits:
        simulator = exits.enter_context(SimulatorProcess(simulator_config()))
        url = exits.enter_context(postgres_database("plumbline_tenant"))
        keys = {
            "admin": issue_key(url, "platform", admin=True),
            "alpha": issue_key(url, "alpha"),
            "beta": issue_key(url, "beta"),
        }
        config = gateway_config(simulator.base_url)
        config["models"][0]["allowed_media_domains"] = [ALLOWED_MEDIA_HOST]
        gateway = exits.enter_context(GatewayProcess(config, url))
        yield SecurityStack(gateway, url, keys, simulator.base_url)


@pytest.fixture(scope="module")
def reader(stack: SecurityStack) -> Iterator[CallReader]:
    found = CallReader(stack.database_url)
    yield found
    found.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    running = Listener()
    yield running
    running.close()


def _post(stack: SecurityStack, who: str, path: str, body: dict[str, Any]) -> httpx.Response:
    with stack.api(who) as client:
        return client.post(path, json={"model": "tiny", "max_tokens": 2, **body})


def _chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **extra}


def _cached(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    details = response.json()["usage"]["prompt_tokens_details"]
    return int(details["cached_tokens"] or 0)


def _refused(reader: CallReader, response: httpx.Response, param: str) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["param"], error["type"]) == (param, "BadRequestError"), error
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert call.status_code == 400 and call.backend is None, "refused before any backend"
    return str(error["message"])


def error_param(response: httpx.Response) -> str:
    """The `param` of an OpenAI-shaped error."""
    return str(response.json()["error"]["param"])


def _body(path: str, text: str, **extra: Any) -> dict[str, Any]:
    return _chat(text, **extra) if path == CHAT else {"prompt": text, **extra}


@pytest.mark.parametrize("path", [CHAT, COMPLETIONS])
def test_teams_never_share_the_prefix_cache(stack: SecurityStack, path: str) -> None:
    prompt = LONG.format(tag=path)
    assert _cached(_post(stack, "alpha", path, _body(path, prompt))) == 0
    assert _cached(_post(stack, "alpha", path, _body(path, prompt))) > 0, "a team's own hits"
    # Another team timing the same prompt learns nothing: its blocks are salted apart.
    assert _cached(_post(stack, "beta", path, _body(path, prompt))) == 0
    # Nor by naming the same salt as the other team: the gateway's salt replaces it.
    salted = LONG.format(tag=f"{path}-salted")
    shared = {"cache_salt": "shared-salt"}
    assert _cached(_post(stack, "alpha", path, _body(path, salted, **shared))) == 0
    assert _cached(_post(stack, "alpha", path, _body(path, salted, **shared))) > 0
    assert _cached(_post(stack, "beta", path, _body(path, salted, **shared))) == 0
    # A client's own salt still keeps its users apart inside the team.
    other = {"cache_salt": "another-user"}
    assert _cached(_post(stack, "alpha", path, _body(path, salted, **other))) == 0


@pytest.mark.parametrize("salt", ["a/b", "", "x" * 129, 7, "nul\x00"])
def test_a_cache_salt_vllm_refuses_is_refused(
    stack: SecurityStack, reader: CallReader, salt: object
) -> None:
    response = _post(stack, "alpha", CHAT, _chat("hello", cache_salt=salt))
    assert "cache_salt" in _refused(reader, response, "cache_salt")


@pytest.mark.parametrize("path", [CHAT, COMPLETIONS])
def test_team_keys_cannot_jump_the_shared_queue(
    stack: SecurityStack, reader: CallReader, path: str
) -> None:
    for urgent in (-1, "-5", -(2**62)):
        response = _post(stack, "alpha", path, _body(path, "hello", priority=urgent))
        assert "priority" in _refused(reader, response, "priority")
    # Later than everyone else is the team's own business; admin keys (resampling) may set any.
    assert _post(stack, "alpha", path, _body(path, "hello", priority=3)).status_code == 200
    assert _post(stack, "admin", path, _body(path, "hello", priority=-1)).status_code == 200


@pytest.mark.parametrize("path", [CHAT, COMPLETIONS])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("kv_transfer_params", {"do_remote_prefill": True, "remote_host": "127.0.0.1"}),
        ("ec_transfer_params", {"do_remote_encode": True}),
        ("vllm_xargs", {"extension": 1}),
        ("request_id", "beta-req-1"),
    ],
)
@pytest.mark.parametrize("who", ["alpha", "admin"])
def test_engine_steering_fields_are_refused(
    stack: SecurityStack, reader: CallReader, path: str, field: str, value: object, who: str
) -> None:
    response = _post(stack, who, path, _body(path, "hello", **{field: value}))
    assert field in _refused(reader, response, field)


def _image(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def test_media_urls_the_gpu_host_would_fetch_are_refused(
    stack: SecurityStack, reader: CallReader, listener: Listener
) -> None:
    target = f"{listener.url}/latest/meta-data"
    refused_parts = [
        _image(target),
        {"type": "audio_url", "audio_url": {"url": target}},
        {"type": "video_url", "video_url": {"url": target}},
        {"image_url": target},  # vLLM's untyped shorthand
        {"type": "input_image", "image_url": target},
        {"type": "file", "file": {"file_url": target}},
        _image("file:///etc/passwd"),
        _image(target.upper()),
        _image(f"http://{ALLOWED_MEDIA_HOST}@{listener.url[7:]}/x"),
        _image(f"{listener.url}/#@{ALLOWED_MEDIA_HOST}/x"),
        _image(f"https://{ALLOWED_MEDIA_HOST}.{listener.url[7:]}/x"),
        _image(f"//{ALLOWED_MEDIA_HOST}/x"),
        _image(f"http://{ALLOWED_MEDIA_HOST}\\@{listener.url[7:]}/x"),
        _image(f"http://user@{ALLOWED_MEDIA_HOST}/x"),
    ]
    for part in refused_parts:
        content = [{"type": "text", "text": "describe"}, part]
        response = _post(stack, "alpha", CHAT, {"messages": [{"role": "user", "content": content}]})
        media = next(key for key in part if key != "type")
        place = f"messages[0].content[1].{media}"
        message = _refused(reader, response, error_param(response))
        assert "data:" in message and error_param(response).startswith(place), part
    assert listener.hits == []
    allowed_parts = [
        _image(PNG),
        _image("DATA:image/png;base64,AAAA"),
        _image(f"https://{ALLOWED_MEDIA_HOST}/cat.png"),
        _image(f"http://{ALLOWED_MEDIA_HOST.upper()}/cat.png"),
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]
    for part in allowed_parts:
        content = [{"type": "text", "text": "describe"}, part]
        response = _post(stack, "alpha", CHAT, {"messages": [{"role": "user", "content": content}]})
        assert response.status_code == 200, (part, response.text)
