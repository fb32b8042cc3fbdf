"""The pooling runner's APIs: embeddings, pooling, classify, score and rerank (vLLM 0.32).

Each answers one JSON body that the gateway passes on unchanged; it records the backend's
usage (input tokens only) and the call's items. They are served by models whose config says
`runner: pooling`; through litellm only embeddings are.
"""

from __future__ import annotations

from typing import Any

from gateway.config import Limits, ModelConfig
from gateway.errors import GatewayError
from gateway.proxy.call_kinds import pooling_items as items
from gateway.proxy.call_kinds.base import CallKind, ResponseMeter
from gateway.proxy.call_kinds.pooling_meter import PoolingMeter
from gateway.proxy.call_kinds.vllm_only import refuse_litellm
from gateway.proxy.lax_values import RequestFields, read_pooling_fields
from gateway.proxy.litellm_params import check_litellm_params
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from gateway.proxy.tenant_fields import check_media_in
from plumbline.logprob_codec import CHAT

# What the OpenAI embeddings API takes; only these reach a litellm model's provider.
LITELLM_EMBEDDING_FIELDS = frozenset({"model", "input", "encoding_format", "dimensions", "user"})
# Answered as raw bytes with the metadata (usage included) in a response header, or none at all.
BYTES_FORMATS = ("bytes", "bytes_only")


def refuse_unmetered_formats(payload: dict[str, Any]) -> None:
    """Refuse the binary encodings: the gateway relays JSON answers only, and meters their usage."""
    if payload.get("encoding_format") in BYTES_FORMATS:
        raise GatewayError(
            400,
            f"`encoding_format` {payload['encoding_format']!r} is not served by this gateway "
            "(its answer is raw bytes, metered from a response header); use 'float' or 'base64'.",
            "encoding_format",
        )


class PoolingCall(CallKind):
    """One pooling API at one path: no logprobs, no stream, an answer passed on as it came."""

    fmt = CHAT  # (no logprobs are ever captured)
    body_format = "a pooling API JSON object"
    asks_stream_usage = False
    runner: str | None = "pooling"
    # Resampling an embedding says nothing of stability, and would keep the vectors.
    live_sampled = False

    def __init__(self, path: str) -> None:
        self.path = path

    def count(self, payload: dict[str, Any]) -> tuple[str, int | None]:
        """The field holding the call's items, and how many (None where vLLM would refuse it)."""
        return items.prompt_items(payload)

    def media_sources(self, payload: dict[str, Any]) -> list[tuple[str, Any]]:
        """Message-like lists whose content parts vLLM would load as media."""
        return [*items.conversations(payload, "messages"), *items.conversations(payload, "input")]

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """`priority` as vLLM reads it, and the call's item count."""
        fields = read_pooling_fields(payload)
        fields.items = self.count(payload)[1]
        return fields

    def admit(
        self, payload: dict[str, Any], fields: RequestFields, model: ModelConfig, limits: Limits
    ) -> None:
        """The runner; at most `limits.max_pooling_items` items; media from allowed hosts only."""
        super().admit(payload, fields, model, limits)
        if fields.items is not None and fields.items > limits.max_pooling_items:
            field = self.count(payload)[0]
            raise GatewayError(
                400,
                f"`{field}` holds {fields.items} items; this gateway takes at most "
                f"{limits.max_pooling_items} per call. Split it into several calls.",
                field,
            )
        check_media_in(self.media_sources(payload), model.allowed_media_domains)

    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Nothing: these APIs have no logprobs."""
        return LogprobPlan()

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A meter of the answer's usage."""
        return PoolingMeter()

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse: this kind needs a vLLM backend."""
        refuse_litellm(self.path, payload)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Never reached: `check_litellm_params` refuses first."""
        refuse_litellm(self.path, arguments)


class Embeddings(PoolingCall):
    """`/v1/embeddings`, also served through litellm where the provider has embeddings."""

    def __init__(self) -> None:
        super().__init__("/v1/embeddings")

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """As every pooling call; the binary encodings refused."""
        refuse_unmetered_formats(payload)
        return super().read_fields(payload)

    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Only the OpenAI embeddings fields reach the provider."""
        check_litellm_params(payload, LITELLM_EMBEDDING_FIELDS)

    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """litellm's embeddings call."""
        arguments.pop("stream", None)
        return await litellm.aembedding(**arguments)


class Pooling(PoolingCall):
    """`/pooling`: the pooler's raw output."""

    def __init__(self) -> None:
        super().__init__("/pooling")

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """As every pooling call; binary encodings and IO-processor plugin data refused."""
        refuse_unmetered_formats(payload)
        if "data" in payload:
            # An IO processor plugin reads `data` as it likes (some fetch URLs in it).
            raise GatewayError(
                400,
                "`data` (a request for the server's IO processor plugin) is not accepted by "
                "this gateway; send `input` or `messages`.",
                "data",
            )
        return super().read_fields(payload)


class Classify(PoolingCall):
    """`/classify` (a model served with `--convert classify`)."""

    def __init__(self) -> None:
        super().__init__("/classify")


class Score(PoolingCall):
    """`/score` and `/v1/score`: one score per pair."""

    def count(self, payload: dict[str, Any]) -> tuple[str, int | None]:
        """The pairs."""
        return items.score_items(payload)

    def media_sources(self, payload: dict[str, Any]) -> list[tuple[str, Any]]:
        """Multimodal `{"content": [...]}` inputs on either side."""
        return items.score_contents(payload)


class Rerank(Score):
    """`/rerank`, `/v1/rerank` and `/v2/rerank`: the documents by relevance to the query."""

    def count(self, payload: dict[str, Any]) -> tuple[str, int | None]:
        """The documents."""
        return items.rerank_items(payload)


class Tokens(PoolingCall):
    """`/tokenize` and `/detokenize`: any model's tokenizer, no engine work, nothing to price."""

    body_format = "a tokenizer JSON object"
    runner = None
    takes_priority = False  # nothing is scheduled

    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """Nothing is read (these requests have no priority)."""
        return read_pooling_fields({})

    def admit(
        self, payload: dict[str, Any], fields: RequestFields, model: ModelConfig, limits: Limits
    ) -> None:
        """Media in a chat to tokenize are held to the model's hosts as in chat."""
        check_media_in(self.media_sources(payload), model.allowed_media_domains)

    def confine(self, payload: dict[str, Any]) -> None:
        """Tokenizing touches no cache: no salt (vLLM would log it as an ignored field)."""
        payload.pop("cache_salt", None)

    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A meter that counts the call only: a token count here is no usage."""
        return PoolingMeter(counts_usage=False)


def pooling_kinds() -> tuple[CallKind, ...]:
    """A fresh adapter of every pooling and tokenizer API, one per path."""
    return (
        Embeddings(),
        Pooling(),
        Classify(),
        Score("/score"),
        Score("/v1/score"),
        Rerank("/rerank"),
        Rerank("/v1/rerank"),
        Rerank("/v2/rerank"),
        Tokens("/tokenize"),
        Tokens("/detokenize"),
    )
