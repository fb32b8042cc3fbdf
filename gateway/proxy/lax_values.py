"""The request fields the gateway acts on, read with pydantic's lax rules exactly as vLLM 0.32 does.

vLLM validates its request models in pydantic's lax Python mode (FastAPI calls
`validate_python`), so `"stream": "yes"`, `1` or `"true"` is a stream and `"n": "2"` or `2.0`
is two choices. The gateway decides whether to expect SSE, what to record and what to add for
metering from these fields, so it reads them with the same types (the same pydantic), and
refuses with a 400 what vLLM would refuse, rather than guess and answer a 502 later.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from gateway.errors import GatewayError

# The subset of vLLM's fields the gateway reads; everything else passes untouched.
CHAT_FIELDS = (
    "stream",
    "stream_options",
    "n",
    "logprobs",
    "top_logprobs",
    "max_tokens",
    "max_completion_tokens",
    "echo",
    "prompt_logprobs",
    "priority",
)
COMPLETION_FIELDS = (
    "stream",
    "stream_options",
    "n",
    "logprobs",
    "max_tokens",
    "echo",
    "prompt_logprobs",
    "priority",
)
# vLLM's "before" validators compare these raw, and refuse a value that is not a number.
CHAT_RAW_NUMBERS = ("prompt_logprobs", "top_logprobs")
RESPONSES_FIELDS = (
    "stream",
    "max_output_tokens",
    "top_logprobs",
    "include",
    "store",
    "background",
    "previous_response_id",
    "priority",
)
COMPLETION_RAW_NUMBERS = ("prompt_logprobs", "logprobs")
# The `include` entry that asks the Responses API for output logprobs.
RESPONSES_LOGPROBS = "message.output_text.logprobs"
_INT64 = 2**63
Priority = Annotated[int, Field(ge=-_INT64, le=_INT64 - 1)]
COMPLETION_DEFAULT_MAX_TOKENS = 16


def _none_is_zero(value: object) -> object:
    return 0 if value is None else value


class _Lax(BaseModel):
    """Fields typed as in vLLM's protocol; extra keys are not this model's business."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class LaxStreamOptions(_Lax):
    """vLLM's StreamOptions."""

    include_usage: bool | None = False
    continuous_usage_stats: bool | None = False


class ChatFields(_Lax):
    """The acted-on fields of vLLM's ChatCompletionRequest, with its types and defaults."""

    stream: bool | None = False
    stream_options: LaxStreamOptions | None = None
    n: int | None = 1
    logprobs: bool | None = False
    top_logprobs: Annotated[int, BeforeValidator(_none_is_zero)] = 0
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    echo: bool = False
    prompt_logprobs: int | None = None
    priority: Priority = 0


class CompletionFields(_Lax):
    """The acted-on fields of vLLM's CompletionRequest, with its types and defaults."""

    stream: bool | None = False
    stream_options: LaxStreamOptions | None = None
    n: int = 1
    logprobs: int | None = None
    max_tokens: int | None = COMPLETION_DEFAULT_MAX_TOKENS
    echo: bool | None = False
    prompt_logprobs: int | None = None
    priority: Priority = 0


class ResponsesFields(_Lax):
    """The acted-on fields of vLLM's ResponsesRequest, with its types and defaults."""

    stream: bool | None = False
    max_output_tokens: int | None = None
    top_logprobs: int | None = 0
    include: list[str] | None = None
    store: bool | None = True
    background: bool | None = False
    previous_response_id: str | None = None
    priority: Priority = 0


class PoolingFields(_Lax):
    """The acted-on field of vLLM's pooling requests (embeddings, pooling, classify, scores)."""

    priority: Priority = 0


class RequestFields:
    """What vLLM will read from one request body, for the fields the gateway acts on."""

    __slots__ = (
        "echo",
        "include_usage",
        "items",
        "logprobs",
        "max_tokens",
        "n",
        "priority",
        "prompt_logprobs",
        "stream",
        "top_logprobs",
    )

    def __init__(
        self, fields: ChatFields | CompletionFields | ResponsesFields | PoolingFields
    ) -> None:
        self.priority = fields.priority
        # Inputs, documents or pairs of a pooling call (set by its kind); None for the others.
        self.items: int | None = None
        if isinstance(fields, PoolingFields):
            # One JSON answer, never streamed, no tokens generated.
            self.stream = False
            self.include_usage = False
            self.n: int | None = None
            self.echo = False
            self.prompt_logprobs: int | None = None
            self.logprobs: bool | int | None = None
            self.top_logprobs: int = 0
            self.max_tokens: int | None = None
            return
        self.stream = bool(fields.stream)
        if isinstance(fields, ResponsesFields):
            # One answer, no echo; logprobs only when `include` names them.
            self.include_usage = False
            self.n = 1
            self.echo = False
            self.prompt_logprobs = None
            self.logprobs = RESPONSES_LOGPROBS in (fields.include or ())
            self.top_logprobs = fields.top_logprobs or 0
            self.max_tokens = fields.max_output_tokens
            return
        options = fields.stream_options
        self.include_usage = bool(options and options.include_usage)
        self.n = fields.n
        self.echo = bool(fields.echo)
        self.prompt_logprobs = fields.prompt_logprobs
        if isinstance(fields, ChatFields):
            self.logprobs = bool(fields.logprobs)
            self.top_logprobs = fields.top_logprobs
            # vLLM: max_completion_tokens wins when set.
            limit = fields.max_completion_tokens
            self.max_tokens = fields.max_tokens if limit is None else limit
        else:
            self.logprobs = fields.logprobs
            self.top_logprobs = 0
            self.max_tokens = fields.max_tokens


def _refusal(error: ValidationError) -> GatewayError:
    first = error.errors(include_url=False)[0]
    # vLLM names a schema error's parameter by its place in the body: `body.stream`.
    where = ".".join(["body", *(str(part) for part in first["loc"])])
    got = repr(first.get("input"))[:100]
    return GatewayError(
        400,
        f"`{where}`: {first['msg']} (got {got}). Send it as vLLM's API documents it "
        "(a JSON boolean, integer or object).",
        where,
    )


def _read(
    payload: dict[str, Any],
    raw_numbers: tuple[str, ...],
    names: tuple[str, ...],
    model: type[ChatFields] | type[CompletionFields] | type[ResponsesFields] | type[PoolingFields],
) -> RequestFields:
    for name in raw_numbers:
        value = payload.get(name)
        if value is not None and not isinstance(value, int | float):
            raise GatewayError(400, f"`{name}` must be an integer. Send a JSON number.", name)
    subset = {name: payload[name] for name in names if name in payload}
    if model is CompletionFields and subset.get("max_tokens", 0) is None:
        # vLLM's completions read a null max_tokens as the default.
        subset["max_tokens"] = COMPLETION_DEFAULT_MAX_TOKENS
    try:
        fields = model.model_validate(subset)
    except ValidationError as error:
        raise _refusal(error) from None
    return RequestFields(fields)


def read_chat_fields(payload: dict[str, Any]) -> RequestFields:
    """Read a chat request's acted-on fields as vLLM will; a value vLLM refuses is a 400."""
    return _read(payload, CHAT_RAW_NUMBERS, CHAT_FIELDS, ChatFields)


def read_completion_fields(payload: dict[str, Any]) -> RequestFields:
    """Read a completions request's acted-on fields as vLLM will; a refused value is a 400."""
    return _read(payload, COMPLETION_RAW_NUMBERS, COMPLETION_FIELDS, CompletionFields)


def read_responses_fields(payload: dict[str, Any]) -> RequestFields:
    """Read a Responses request's acted-on fields as vLLM will; a refused value is a 400."""
    return _read(payload, (), RESPONSES_FIELDS, ResponsesFields)


def read_pooling_fields(payload: dict[str, Any]) -> RequestFields:
    """Read a pooling request's acted-on field (`priority`) as vLLM will; a refused one is a 400."""
    return _read(payload, (), ("priority",), PoolingFields)


def responses_field(payload: dict[str, Any], name: str) -> Any:
    """One of the Responses fields the gateway refuses or overrides, as vLLM reads it."""
    subset = {name: payload[name]} if name in payload else {}
    return getattr(ResponsesFields.model_validate(subset), name)
