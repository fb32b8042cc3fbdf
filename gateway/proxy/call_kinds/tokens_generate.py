"""The token-in/token-out adapter (`/inference/v1/generate`, vLLM `--enable-scale-out`).

The body names token ids and a nested `sampling_params`; the answer has OpenAI-like `choices`
of `token_ids` and a `usage` object, so the shared choices meter reads it, counting tokens by
ids. Its logprobs are keyed by token id, not text, so none are captured.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import GatewayError
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.choices_meter import ChoicesMeter
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.lax_values import RequestFields, read_completion_fields
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from plumbline.logprob_codec import CHAT

PATH = "/inference/v1/generate"
# vLLM's generate request fields that the gateway refuses, and why (beyond the shared ones).
REFUSED = (
    ("features", "it names multimodal inputs by their hashes in the engine's shared caches"),
    ("content_parts", "it carries media the gateway cannot hold to the model's media domains"),
)


class TokensMeter(ChoicesMeter):
    """Counts each choice's `token_ids`; never captures or strips logprobs."""

    def _capture_raw(self, index: int, raw: bytes, *, count: bool = True) -> int | None:
        return None

    def _take_parsed(self, choice: dict[str, Any]) -> bool:
        return False

    def _meter(
        self, choices: list[dict[str, Any]], found: list[tuple[int, int]], data: bytes, t: float
    ) -> bool:
        finished = False
        for choice in choices:
            ids = choice.get("token_ids")
            self.completion_tokens_seen += len(ids) if isinstance(ids, list) else 0
            if choice.get("finish_reason") is not None:
                finished = True
                self.finish_reason = str(choice["finish_reason"])
        if choices:
            self.token_chunk_times.append(t)
        return finished


class TokensGenerate(CallKind):
    """vLLM's token-in/token-out generate API."""

    fmt = CHAT
    path = PATH

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """Stream, usage and `max_tokens` as vLLM reads them (the latter from sampling_params)."""
        for name, why in REFUSED:
            if payload.get(name) is not None:
                raise GatewayError(400, f"`{name}` is not accepted by this gateway: {why}.", name)
        sampling = payload.get("sampling_params")
        if sampling is not None and not isinstance(sampling, dict):
            raise GatewayError(400, "`sampling_params` must be an object.", "sampling_params")
        sampling = sampling or {}
        if sampling.get("extra_args") is not None:
            raise GatewayError(
                400,
                "`sampling_params.extra_args` is not accepted by this gateway: it passes "
                "arbitrary arguments to the engine's custom extensions.",
                "sampling_params.extra_args",
            )
        # /render answers carry a request_id; the gateway names requests upstream itself.
        payload.pop("request_id", None)
        view = {
            key: value
            for key, value in (
                ("stream", payload.get("stream")),
                ("stream_options", payload.get("stream_options")),
                ("priority", payload.get("priority")),
                ("max_tokens", sampling.get("max_tokens")),
                ("n", sampling.get("n")),
            )
            if value is not None
        }
        return read_completion_fields(view)

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Capture none (token-id logprobs have no text to keep)."""
        return LogprobPlan()

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A generate answer's meter; this API sends no system_fingerprint, so none is added."""
        return TokensMeter(plan, None)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse: litellm has no token-in/token-out API."""
        refuse_litellm(PATH, payload)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        refuse_litellm(PATH, arguments)
