"""The real vLLM's answers on the routes beyond chat (tests/fixtures/vllm_routes): replay, compare.

A record's request may name an earlier record's response id (`{id:NAME}` in its "template"), so
records are replayed in capture order, each server kind against a server configured alike, with
the ids the replaying server handed out. Shapes are compared, not values: ids, timings and the
text of two different models differ; error bodies must be equal (ids mapped back).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.simulator.json_shapes import mismatches
from tests.support.waiting import wait_until

ROUTES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_routes"
_REFERENCE = re.compile(r"\{id:([a-z0-9_]+)\}")
VOLATILE_HEADERS = frozenset({"date"})
# Schema errors of a union body (vLLM's embeddings request is five models): vLLM lists each
# branch's failures; the simulator validates one model, so it reports the first one only.
UNION_SCHEMA_ERRORS = frozenset({"pool_embeddings_bad_format"})
# The simulator's configuration for each kind of real server the records came from.
KIND_CONFIG: dict[str, dict[str, Any]] = {
    # Slower decoding, so a background response is still running when the replay cancels it.
    "store": {
        "enable_responses_store": True,
        "timing": {"prefill_ms_per_token": 0.01, "decode_ms_per_token": 10.0},
    },
    "generate": {},
    "pooling": {"runner": "pooling"},
}


def load_records() -> list[dict[str, Any]]:
    """Every record, in capture order (the files carry their position)."""
    records = [json.loads(path.read_text()) for path in ROUTES.glob("*.json")]
    return sorted(records, key=lambda record: record["order"])


def kind_of(record: dict[str, Any]) -> str:
    """Which simulator configuration replays a record."""
    server = record["server"]
    if server["runner"] == "pooling":
        return "pooling"
    return "store" if server["responses_store"] else "generate"


@dataclass
class Replayer:
    """Replays records against one server, remembering the ids it answered with."""

    http: httpx.Client
    ids: dict[str, str] = field(default_factory=dict)
    real_ids: dict[str, str] = field(default_factory=dict)

    def replay(self, record: dict[str, Any]) -> httpx.Response:
        """Send the record's request (references filled with this server's ids)."""
        if record.get("settle"):
            response_id = self.ids[record["settle"]]
            wait_until(
                lambda: finished(self.http, response_id),
                timeout=60,
                what=f"background response {response_id} finishing",
            )
        request = record["request"]
        template = record.get("template") or {}
        path = self._fill(template.get("path", request["path"]))
        body = request.get("json")
        if template.get("json") is not None:
            body = json.loads(self._fill(json.dumps(template["json"])))
        files = None
        if request.get("files"):
            files = {k: (n, c.encode(), t) for k, (n, c, t) in request["files"].items()}
        content = request.get("content")
        resp = self.http.request(
            request["method"],
            path,
            json=body,
            content=content.encode() if content is not None else None,
            headers=request["headers"],
            files=files,
            data=request.get("data"),
        )
        self._remember(record, resp)
        return resp

    def _fill(self, text: str) -> str:
        return _REFERENCE.sub(lambda match: self.ids[match.group(1)], text)

    def _remember(self, record: dict[str, Any], resp: httpx.Response) -> None:
        real = response_id_of(record)
        if real is None or resp.status_code != 200:
            return
        mine = response_id_of(as_record(record["name"], resp))
        if mine is not None:
            self.real_ids[real] = mine
            self.ids[record["name"]] = mine


def response_id_of(record: dict[str, Any]) -> str | None:
    """The id a record's answer gave: its body's, or a Responses stream's first event's."""
    body = record.get("body")
    if isinstance(body, dict) and isinstance(body.get("id"), str):
        return str(body["id"])
    events = record.get("events") or []
    first = events[0]["data"] if events else None
    if isinstance(first, dict) and isinstance(first.get("response"), dict):
        found = first["response"].get("id")
        return found if isinstance(found, str) else None
    return None


def as_record(name: str, resp: httpx.Response) -> dict[str, Any]:
    """A live response in a record's form, to compare another server's answer with it."""
    record: dict[str, Any] = {
        "name": name,
        "status": resp.status_code,
        "headers": dict(resp.headers),
    }
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        record["events"] = parse_events(resp.text)
    else:
        record["body"] = _json_or_text(resp)
    return record


def _json_or_text(resp: httpx.Response) -> Any:
    # vLLM's LoRA routes answer plain text.
    if not resp.content:
        return None
    try:
        return resp.json()
    except ValueError:
        return resp.text


def finished(http: httpx.Client, response_id: str) -> bool:
    """Whether a stored response has left the queued and in_progress states."""
    status = http.get(f"/v1/responses/{response_id}").json()["status"]
    return status not in ("queued", "in_progress")


def parse_events(text: str) -> list[dict[str, Any]]:
    """SSE events as {"event", "data"} (data parsed unless it is [DONE])."""
    events = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name = None
        data = ""
        for line in block.splitlines():
            key, _, value = line.partition(": ")
            assert key in ("event", "data"), f"unexpected SSE line {line!r}"
            name, data = (value, data) if key == "event" else (name, value)
        events.append({"event": name, "data": data if data == "[DONE]" else json.loads(data)})
    return events


def event_name(event: dict[str, Any]) -> str:
    """An event's name, its data's `type`, or for data-only chunks: `[DONE]`, usage or delta."""
    data = event["data"]
    if event["event"]:
        return str(event["event"])
    if not isinstance(data, dict):
        return str(data)
    if "type" in data:
        return str(data["type"])
    return "usage" if data.get("choices") == [] else "choices.delta"


def event_sequence(events: list[dict[str, Any]]) -> list[str]:
    """Event names with runs of deltas folded (how many deltas depends on engine steps)."""
    names: list[str] = []
    for event in events:
        name = event_name(event)
        if not (names and names[-1] == name and name.endswith("delta")):
            names.append(name)
    return names


def _both_ways(ours: Any, theirs: Any, where: str) -> list[str]:
    found = mismatches(ours, theirs, where)
    return found + [f"{p} (the other way round)" for p in mismatches(theirs, ours, where)]


def _map_ids(value: Any, ids: dict[str, str]) -> Any:
    text = json.dumps(value)
    for real, mine in ids.items():
        text = text.replace(real, mine)
    return json.loads(text)


def differences(record: dict[str, Any], resp: httpx.Response, ids: dict[str, str]) -> list[str]:
    """How a live response differs from the record: status, headers, shape, error body."""
    if resp.status_code != record["status"]:
        return [f"status {resp.status_code} != {record['status']}: {resp.text[:300]}"]
    found = []
    names = set(resp.headers) - VOLATILE_HEADERS
    if names != set(record["headers"]) - VOLATILE_HEADERS:
        found.append(f"headers {sorted(names)} != {sorted(record['headers'])}")
    if resp.headers.get("content-type") != record["headers"].get("content-type"):
        found.append(f"content-type {resp.headers.get('content-type')}")
    if "events" in record:
        return found + _stream_differences(parse_events(resp.text), record["events"])
    body = _json_or_text(resp)
    if record["status"] >= 400:
        expected = _map_ids(record["body"], ids)
        if record["name"] in UNION_SCHEMA_ERRORS:
            body, expected = _first_schema_error(body), _first_schema_error(expected)
        return found + ([] if body == expected else [f"error body {body} != {expected}"])
    return found + _both_ways(body, record["body"], "$")


def _first_schema_error(body: Any) -> Any:
    """A schema error's type, param and first listed failure (not the count or the rest)."""
    error = dict(body["error"])
    error["message"] = error["message"].splitlines()[1]
    return error


def _stream_differences(ours: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[str]:
    mine, real = event_sequence(ours), event_sequence(theirs)
    if mine != real:
        return [f"event sequence {mine} != {real}"]
    found = []
    first_real: dict[str, Any] = {}
    for event in theirs:
        first_real.setdefault(event_name(event), event["data"])
    seen = set()
    for event in ours:
        name = event_name(event)
        if name not in seen:
            seen.add(name)
            found += _both_ways(event["data"], first_real[name], name)
    return found
