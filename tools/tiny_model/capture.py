"""Capture requests and responses from a real vLLM as JSON fixtures (tests/fixtures/vllm_fresh/).

    scripts/vllm-server -- .venv/bin/python tools/tiny_model/capture.py

Each file holds {"name", "server", "request", "status", "headers", "text"} plus "body" (parsed
JSON, null when empty) or, for event streams, "events" (each `data:` payload parsed, "[DONE]"
kept as the string). "text" is the response exactly as sent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
from capture_cases import CASES, Case

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "vllm_fresh"


def parse_events(text: str) -> list[Any]:
    """Split an SSE body into its `data:` payloads, parsed as JSON where they are JSON."""
    events: list[Any] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        if not block.startswith("data: "):
            raise ValueError(f"unexpected SSE block {block!r}")
        payload = block.removeprefix("data: ")
        events.append(payload if payload == "[DONE]" else json.loads(payload))
    return events


def capture(client: httpx.Client, case: Case) -> dict[str, Any]:
    """Send one case and return its fixture record."""
    body = case.prepare(client) if case.prepare else case.json
    resp = client.request(
        case.method, case.path, json=body, content=case.content, headers=case.headers
    )
    request: dict[str, Any] = {"method": case.method, "path": case.path, "headers": case.headers}
    if body is not None:
        request["json"] = body
    if case.content is not None:
        request["content"] = case.content
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
        record["body"] = resp.json() if resp.content else None
    return record


def server_info(client: httpx.Client) -> dict[str, Any]:
    """Describe the server the captures came from."""
    model = client.get("/v1/models").json()["data"][0]
    return {
        "version": client.get("/version").json()["version"],
        "model_root": Path(model["root"]).name,
        "max_model_len": model["max_model_len"],
    }


def main(argv: list[str] | None = None) -> int:
    """Capture every case into the output directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("PLUMBLINE_VLLM_URL"))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no --url and no $PLUMBLINE_VLLM_URL (run it under scripts/vllm-server)")
    args.out.mkdir(parents=True, exist_ok=True)
    with httpx.Client(base_url=args.url, timeout=60) as client:
        server = server_info(client)
        for case in CASES:
            record = {"server": server, **capture(client, case)}
            path = args.out / f"{case.name}.json"
            path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
            sys.stdout.write(f"{path.relative_to(ROOT)}: {record['status']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
