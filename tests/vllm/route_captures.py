"""Capture the real vLLM's answers on its routes beyond chat, as tests/fixtures/vllm_routes/.

    scripts/vllm-server --responses-store -- .venv/bin/python -m tests.vllm.route_captures store
    scripts/vllm-server -- .venv/bin/python -m tests.vllm.route_captures nostore  # then: generate
    scripts/vllm-server --runner pooling -- .venv/bin/python -m tests.vllm.route_captures pooling

Each file holds {"name", "server", "order" (the position in CASES), "request", "status",
"headers", "text"} plus "body" (parsed JSON, null when empty) or, for event streams, "events"
({"event", "data"} per SSE event, data parsed). A request path or body may name an earlier
capture's response id as `{id:NAME}`; "template" keeps the request as written, with the reference.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.simulator.route_records import finished, response_id_of
from tests.support.waiting import wait_until
from tests.vllm.route_capture_cases import CASES, RouteCase

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "vllm_routes"
_REFERENCE = re.compile(r"\{id:([a-z0-9_]+)\}")


def parse_events(text: str) -> list[dict[str, Any]]:
    """Split an SSE body into events: {"event": name or None, "data": parsed JSON or string}."""
    events: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name: str | None = None
        data = ""
        for line in block.splitlines():
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "data":
                data = value
            else:
                raise ValueError(f"unexpected SSE line {line!r}")
        parsed: Any = data if data == "[DONE]" else json.loads(data)
        events.append({"event": name, "data": parsed})
    return events


def record_of(resp: httpx.Response, case: RouteCase, path: str) -> dict[str, Any]:
    """The fixture record of one exchange."""
    request: dict[str, Any] = {"method": case.method, "path": path, "headers": case.headers}
    if case.json is not None:
        request["json"] = case.json
    if case.content is not None:
        request["content"] = case.content
    if case.files is not None:
        request["files"] = case.files
        request["data"] = case.data
    record: dict[str, Any] = {
        "name": case.name,
        "request": request,
        "status": resp.status_code,
        "headers": dict(resp.headers),
        "text": resp.text,
    }
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        record["events"] = parse_events(resp.text)
    else:
        record["body"] = json_or_text(resp)
    return record


def json_or_text(resp: httpx.Response) -> Any:
    """The parsed JSON body; the text where there is none (vLLM's LoRA routes answer plain text)."""
    if not resp.content:
        return None
    try:
        return resp.json()
    except ValueError:
        return resp.text


def send(client: httpx.Client, case: RouteCase, path: str) -> httpx.Response:
    """Send one case as its client would (JSON, raw bytes or multipart)."""
    files = None
    if case.files is not None:
        files = {
            key: (name, content.encode(), kind) for key, (name, content, kind) in case.files.items()
        }
    return client.request(
        case.method,
        path,
        json=case.json,
        content=case.content.encode() if case.content is not None else None,
        headers=case.headers,
        files=files,
        data=case.data,
    )


def resolve(case: RouteCase, ids: dict[str, str]) -> RouteCase:
    """The case with `{id:NAME}` references replaced by the ids captured so far."""

    def fill(text: str) -> str:
        return _REFERENCE.sub(lambda match: ids[match.group(1)], text)

    body = None if case.json is None else json.loads(fill(json.dumps(case.json)))
    return dataclasses.replace(case, path=fill(case.path), json=body)


def settle(client: httpx.Client, response_id: str) -> None:
    """Wait until a background response is no longer queued or in progress."""
    wait_until(lambda: finished(client, response_id), timeout=120, what=f"{response_id} finishing")


def server_info(client: httpx.Client, runner: str, store: bool) -> dict[str, Any]:
    """Describe the server the captures came from."""
    model = client.get("/v1/models").json()["data"][0]
    return {
        "version": client.get("/version").json()["version"],
        "model_root": Path(model["root"]).name,
        "max_model_len": model["max_model_len"],
        "runner": runner,
        "responses_store": store,
    }


def main(argv: list[str] | None = None) -> int:
    """Capture every case of one server kind into tests/fixtures/vllm_routes/."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted({case.server for case in CASES}))
    parser.add_argument("--url", default=os.environ.get("PLUMBLINE_VLLM_URL"))
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no --url and no $PLUMBLINE_VLLM_URL (run it under scripts/vllm-server)")
    OUT.mkdir(parents=True, exist_ok=True)
    runner = "pooling" if args.kind == "pooling" else "generate"
    store = args.kind == "store"
    ids: dict[str, str] = {}
    with httpx.Client(base_url=args.url, timeout=120) as client:
        server = server_info(client, runner, store)
        for order, case in enumerate(CASES):
            if case.server != args.kind:
                continue
            if case.settle is not None:
                settle(client, ids[case.settle])
            resolved = resolve(case, ids)
            resp = send(client, resolved, resolved.path)
            record = {"server": server, "order": order, **record_of(resp, resolved, resolved.path)}
            if resolved != case:
                record["template"] = {"path": case.path, "json": case.json}
            if case.settle is not None:
                record["settle"] = case.settle
            if (response_id := response_id_of(record)) is not None:
                ids[case.name] = response_id
            target = OUT / f"{case.name}.json"
            target.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
            sys.stdout.write(f"{target.relative_to(ROOT)}: {record['status']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
