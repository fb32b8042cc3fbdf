"""Capture the real vLLM's route table and its answers on the token, batch, render and operator
routes, as tests/fixtures/vllm_routes/dev/*.json and openapi/<runner>.json.

    scripts/vllm-server --dev -- .venv/bin/python -m tests.vllm.other_route_captures dev
    VLLM_SERVER_DEV_MODE=1 scripts/vllm-server --runner pooling -- \
        .venv/bin/python -m tests.vllm.other_route_captures pooling

`--dev` serves the operator routes and the tiny LoRA adapter `tiny-lora`. Records have the form
route_captures.py writes; `server.dev` marks them, so tests/simulator/route_records.py replays
them against a simulator with the operator routes and the adapter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import httpx

from tests.vllm.route_capture_cases import RouteCase
from tests.vllm.route_captures import OUT, ROOT, record_of, send, server_info

TOKENS = [1, 20, 21, 22, 23]
SAMPLING = {"max_tokens": 4, "temperature": 0}
HI = [{"role": "user", "content": "Hi"}]
BYE = [{"role": "user", "content": "Bye"}]
CASES = (
    RouteCase("dev_generate", "dev", "/inference/v1/generate",
              {"model": "tiny", "token_ids": TOKENS, "sampling_params": SAMPLING}),
    RouteCase("dev_generate_stream", "dev", "/inference/v1/generate",
              {"model": "tiny", "token_ids": TOKENS, "sampling_params": SAMPLING, "stream": True,
               "stream_options": {"include_usage": True}}),
    RouteCase("dev_generate_stream_nousage", "dev", "/inference/v1/generate",
              {"model": "tiny", "token_ids": TOKENS, "sampling_params": SAMPLING, "stream": True}),
    RouteCase("dev_generate_no_model", "dev", "/inference/v1/generate",
              {"token_ids": TOKENS, "sampling_params": SAMPLING}),
    RouteCase("dev_generate_bad_model", "dev", "/inference/v1/generate",
              {"model": "nope", "token_ids": TOKENS, "sampling_params": SAMPLING}),
    RouteCase("dev_generate_empty", "dev", "/inference/v1/generate",
              {"model": "tiny", "token_ids": [], "sampling_params": SAMPLING}),
    RouteCase("dev_generate_badjson", "dev", "/inference/v1/generate", content="{nope",
              headers={"content-type": "application/json"}),
    RouteCase("dev_batch_chat", "dev", "/v1/chat/completions/batch",
              {"model": "tiny", "messages": [HI, BYE], "max_tokens": 4, "temperature": 0}),
    RouteCase("dev_batch_chat_stream", "dev", "/v1/chat/completions/batch",
              {"model": "tiny", "messages": [HI], "max_tokens": 4, "stream": True}),
    RouteCase("dev_render_chat", "dev", "/v1/chat/completions/render",
              {"model": "tiny", "messages": HI}),
    RouteCase("dev_render_completions", "dev", "/v1/completions/render",
              {"model": "tiny", "prompt": "Hello there"}),
    RouteCase("dev_render_messages", "dev", "/v1/messages/render",
              {"model": "tiny", "max_tokens": 4, "messages": HI}),
    RouteCase("dev_render_responses", "dev", "/v1/responses/render",
              {"model": "tiny", "input": "Hello there"}),
    RouteCase("dev_models", "dev", "/v1/models", method="GET"),
    RouteCase("dev_lora_chat", "dev", "/v1/chat/completions",
              {"model": "tiny-lora", "messages": HI, "max_tokens": 4, "temperature": 0}),
    RouteCase("dev_is_sleeping", "dev", "/is_sleeping", method="GET"),
    RouteCase("dev_reset_prefix_cache", "dev", "/reset_prefix_cache"),
    RouteCase("dev_pause", "dev", "/pause"),
    RouteCase("dev_is_paused", "dev", "/is_paused", method="GET"),
    RouteCase("dev_resume", "dev", "/resume"),
    RouteCase("dev_start_profile", "dev", "/start_profile"),
    RouteCase("dev_stop_profile", "dev", "/stop_profile"),
    RouteCase("dev_unload_lora_unknown", "dev", "/v1/unload_lora_adapter", {"lora_name": "nope"}),
    RouteCase("dev_load_lora_twice", "dev", "/v1/load_lora_adapter",
              {"lora_name": "tiny-lora", "lora_path": "/nonexistent/tiny-lora"}),
    RouteCase("dev_unload_lora", "dev", "/v1/unload_lora_adapter", {"lora_name": "tiny-lora"}),
    RouteCase("dev_models_unloaded", "dev", "/v1/models", method="GET"),
    RouteCase("dev_load_lora_missing", "dev", "/v1/load_lora_adapter",
              {"lora_name": "other-lora", "lora_path": "/nonexistent/other-lora"}),
    RouteCase("dev_sleep", "dev", "/sleep?level=1"),
    RouteCase("dev_is_sleeping_after", "dev", "/is_sleeping", method="GET"),
    RouteCase("dev_wake_up", "dev", "/wake_up"),
)  # fmt: skip


def route_table(client: httpx.Client) -> list[list[str]]:
    """Every (method, path) the server's OpenAPI document lists."""
    paths = client.get("/openapi.json").json()["paths"]
    return sorted([method.upper(), path] for path, item in paths.items() for method in item)


def main(argv: list[str] | None = None) -> int:
    """Write the route table, and on the dev server the records."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("dev", "pooling"))
    parser.add_argument("--url", default=os.environ.get("PLUMBLINE_VLLM_URL"))
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("no --url and no $PLUMBLINE_VLLM_URL (run it under scripts/vllm-server)")
    with httpx.Client(base_url=args.url, timeout=120) as client:
        runner = "pooling" if args.kind == "pooling" else "generate"
        server: dict[str, Any] = {**server_info(client, runner, False), "dev": True}
        table = {"server": server, "routes": route_table(client)}
        target = OUT / "openapi" / f"{runner}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(table, indent=1) + "\n")
        if args.kind != "dev":
            return 0
        for order, case in enumerate(CASES, start=10_000):
            record = {
                "server": server,
                "order": order,
                **record_of(send(client, case, case.path), case, case.path),
            }
            out = OUT / "dev" / f"{case.name}.json"
            out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
            sys.stdout.write(f"{out.relative_to(ROOT)}: {record['status']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
