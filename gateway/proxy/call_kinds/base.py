"""The shape every call kind's adapter has, and of the meter it puts on a response.

A call kind (chat completions, completions, and later other APIs) is the only part of the
proxy that knows its API: which request fields the gateway reads, what it adds upstream to
measure a call, how a JSON body and an event stream are metered and restored to the client's
bytes, and how an error looks. Forwarding, retries and relaying call these and nothing else.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from gateway.auth.keys import bearer_token
from gateway.config import Limits, ModelConfig
from gateway.errors import GatewayError
from gateway.metering.metered import Metered
from gateway.proxy.asgi_io import Receive, header_text
from gateway.proxy.lax_values import RequestFields
from gateway.proxy.placement import ANYWHERE, Placement
from gateway.proxy.request_plan import LogprobPlan, MeasurementPlan
from gateway.proxy.request_upload import RequestUpload

if TYPE_CHECKING:
    from gateway.state import GatewayState


class ResponseMeter(ABC):
    """Meters one response (a body, or a stream's events) and gives back the client's bytes."""

    # Set once a stream's last event (its terminator) went through `feed`.
    done: bool
    # The backend's system_fingerprint as far as known (given, or learnt from the response).
    fingerprint: str | None

    @abstractmethod
    def body(self, body: bytes, status: int) -> bytes:
        """Meter a whole response body; the body to send. UpstreamProtocolError if unreadable."""

    @abstractmethod
    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Meter one whole SSE event that arrived at gateway time `t`; the bytes to send."""

    @abstractmethod
    def flush(self) -> list[bytes]:
        """What is still held back when the stream ends."""

    @abstractmethod
    def result(self) -> Metered:
        """What was measured so far (also of a stream cut short)."""


class CallKind(ABC):
    """One API the proxy serves: its path, request fields, measurement and restoring."""

    # The logprob format its records keep (`plumbline.logprob_codec`), and its route.
    fmt: str
    path: str
    # How errors name what a body must be, and the event a whole stream ends with.
    body_format = "OpenAI JSON"
    stream_end = "data: [DONE]"
    # Whether a stream asks upstream for a usage chunk (`stream_options`) the client may not.
    asks_stream_usage = True
    # How a 401 tells the client to send its Plumbline key.
    key_hint = "`Authorization: Bearer <key>`"
    # Why no call of this kind has logprobs, where its API has none (the call view says it).
    no_logprobs_reason: str | None = None

    def presented_key(self, headers: dict[bytes, bytes]) -> str | None:
        """The Plumbline key the client sent, from the headers its SDK sends it in."""
        return bearer_token(header_text(headers, b"authorization", 512))

    # The vLLM runner (`--runner`) whose models serve this API; None: every model serves it.
    runner: str | None = "generate"
    # Whether its calls may be picked for live resampling (which keeps request and answer).
    live_sampled = True

    # Whether vLLM requests of this kind carry the team's prefix-cache salt (`cache_salt`).
    salts_cache = True
    # Whether its vLLM requests have a top-level `priority` (set by the gateway where the
    # model's backends schedule by it).
    takes_priority = True

    def prompt_values(self, payload: dict[str, Any]) -> tuple[object, ...]:
        """The request's values a prompt is rendered from, leading part first (read for prefix
        affinity, never changed); none: its calls have no prompt prefix to route by."""
        return ()

    async def open_upload(
        self, receive: Receive, headers: dict[bytes, bytes], limits: Limits
    ) -> RequestUpload | None:
        """An upload read as it arrives, or None: the body is one JSON object, read whole."""
        return None

    @abstractmethod
    def read_fields(self, payload: dict[str, Any]) -> RequestFields:
        """The fields the gateway acts on, read as vLLM reads them (a 400 if it would refuse)."""

    @abstractmethod
    def plan_logprobs(self, payload: dict[str, Any], fields: RequestFields, k: int) -> LogprobPlan:
        """Ask upstream (in `payload`, in place) for the logprobs to capture; how to undo it."""

    def admit(
        self, payload: dict[str, Any], fields: RequestFields, model: ModelConfig, limits: Limits
    ) -> None:
        """Refuse (4xx) what `model` or `limits` do not allow; by default, the other runner."""
        if self.runner is not None and model.runner != self.runner:
            raise GatewayError(
                404,
                f"The model `{model.name}` is a {model.runner} model (its backends run vLLM's "
                f"`--runner {model.runner}`), which does not serve `{self.path}`.",
                "model",
            )

    def confine(self, payload: dict[str, Any]) -> None:
        """Overwrite (in `payload`) what this API's own fields could do across teams."""
        return  # chat and completions have none beyond the shared ones

    async def place(
        self,
        state: GatewayState,
        payload: dict[str, Any],
        model: ModelConfig,
        plan: MeasurementPlan,
        team_id: int | None,
    ) -> Placement:
        """Where the call goes (may change `payload`); a 4xx if it may not go anywhere."""
        return ANYWHERE  # chat and completions: any backend of the model

    @abstractmethod
    def meter(self, plan: MeasurementPlan, fingerprint: str | None) -> ResponseMeter:
        """A meter for one response to a request planned as `plan`."""

    def error_body(self, error: GatewayError) -> bytes:
        """The body of an error answered before any of the response was sent."""
        return error.body()

    def stream_error(self, error: GatewayError) -> bytes:
        """The last bytes of a started stream that an error ends, as vLLM sends them."""
        return b"data: " + error.body() + b"\n\ndata: [DONE]\n\n"

    @abstractmethod
    def check_litellm_params(self, payload: dict[str, Any]) -> None:
        """Refuse (400) fields litellm would act on beyond this API's own."""

    @abstractmethod
    async def call_litellm(self, litellm: Any, arguments: dict[str, Any]) -> Any:
        """Call litellm's function for this API."""
