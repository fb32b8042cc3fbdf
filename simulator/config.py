"""Simulator settings: served model, timing model, prefix cache, scripted answers and faults."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Section(BaseModel):
    """Base for config sections: unknown keys are a mistake, not an extension."""

    model_config = ConfigDict(extra="forbid")


class TimingConfig(_Section):
    """Engine timing model: a batch step costs prefill for new prompts plus one decode pass."""

    max_num_seqs: int = Field(default=256, ge=1)
    # vLLM's `--scheduling-policy`: `fcfs` queues in arrival order (a request's `priority` is
    # accepted and ignored); `priority` admits the lowest `priority` first, then by arrival.
    # Running sequences are never preempted (vLLM may preempt for a more urgent one).
    scheduling_policy: Literal["fcfs", "priority"] = "fcfs"
    prefill_ms_per_token: float = Field(default=0.05, ge=0)
    decode_ms_per_token: float = Field(default=5.0, ge=0)
    decode_ms_per_extra_seq: float = Field(default=0.02, ge=0)

    def decode_step_ms(self, running: int) -> float:
        """Inter-token latency of one decode step with `running` sequences in the batch."""
        return self.decode_ms_per_token + self.decode_ms_per_extra_seq * max(running - 1, 0)


class PrefixCacheConfig(_Section):
    """Block-based automatic prefix caching, as vLLM's `--enable-prefix-caching`."""

    enabled: bool = True
    block_size: int = Field(default=16, ge=1)
    num_blocks: int = Field(default=8192, ge=1)


class UnscriptedConfig(_Section):
    """Length range of the pseudo-text produced for prompts no scenario matches."""

    min_tokens: int = Field(default=8, ge=1)
    max_tokens: int = Field(default=48, ge=1)


class ScriptedAnswer(_Section):
    """One possible answer and its probability mass."""

    text: str
    p: float = Field(gt=0)


class Scenario(_Section):
    """Prompts matching `match` get one of `answers`.

    `match` is a regex searched in the prompt text (for chat, the rendered template) and in
    each chat message's text, so `^...$` can pin a whole user message.
    """

    name: str = ""
    match: str
    answers: list[ScriptedAnswer] = Field(min_length=1)

    @field_validator("match")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return value


class ErrorFault(_Section):
    """Answer with an error; in a stream after `after_tokens` tokens, as an SSE error event."""

    rate: float = Field(default=0.0, ge=0, le=1)
    status: int = Field(default=503, ge=400, le=599)
    after_tokens: int | None = Field(default=None, ge=0)


class StallFault(_Section):
    """Say nothing for `seconds` before the first byte of the response."""

    rate: float = Field(default=0.0, ge=0, le=1)
    seconds: float = Field(default=5.0, ge=0)


class MidStreamStallFault(_Section):
    """Pause a stream for `seconds` after `after_tokens` tokens were sent."""

    rate: float = Field(default=0.0, ge=0, le=1)
    after_tokens: int = Field(default=1, ge=0)
    seconds: float = Field(default=5.0, ge=0)


class CloseFault(_Section):
    """Drop the connection after `after_tokens` tokens (non-streaming: mid-body)."""

    rate: float = Field(default=0.0, ge=0, le=1)
    after_tokens: int = Field(default=1, ge=0)


class GarbageFault(_Section):
    """Send junk bytes: as the whole body, or in a stream after `after_tokens` tokens."""

    rate: float = Field(default=0.0, ge=0, le=1)
    after_tokens: int | None = Field(default=None, ge=0)


class FaultConfig(_Section):
    """Switchable faults; rates are per-request probabilities."""

    error: ErrorFault = Field(default_factory=ErrorFault)
    stall_first_byte: StallFault = Field(default_factory=StallFault)
    stall_mid_stream: MidStreamStallFault = Field(default_factory=MidStreamStallFault)
    close_mid_stream: CloseFault = Field(default_factory=CloseFault)
    garbage: GarbageFault = Field(default_factory=GarbageFault)
    engine_dead: bool = False
    seed: int | None = None


class SimulatorConfig(_Section):
    """Everything the simulator needs; loadable from YAML, replaceable in parts at runtime."""

    model_name: str = "tiny"
    model_root: str = "/models/tiny"
    max_model_len: int = Field(default=4096, ge=2)
    max_logprobs: int = Field(default=20, ge=0)
    version: str = "0.32.0"
    system_fingerprint: str = "vllm-0.32.0-8e90816a"
    engine_id: str = "0"
    enable_per_request_metrics: bool = True
    enable_prompt_tokens_details: bool = True
    enable_request_id_headers: bool = True
    enable_force_include_usage: bool = False
    # VLLM_ENABLE_RESPONSES_API_STORE: keep Responses API results for retrieve, cancel,
    # background and previous_response_id. Off, `store` is silently ignored, as in vLLM.
    enable_responses_store: bool = False
    # vLLM's `--runner`: `generate` serves chat, completions, responses and messages;
    # `pooling` (the model served with `--convert embed`) serves embeddings, pooling, score
    # and rerank. Each answers the other's routes with 404, as vLLM registers routes by task.
    runner: Literal["generate", "pooling"] = "generate"
    # vLLM's `--convert` of a pooling runner: `embed` as above; `classify` serves /classify
    # instead of /v1/embeddings (shapes from vLLM's ClassificationResponse, not captured).
    convert: Literal["embed", "classify"] = "embed"
    # The served model transcribes speech (a Whisper-like model): /v1/audio/* exist. Off, they
    # are vLLM's 404, as for the tiny Llama; no CPU build here has a speech model to compare.
    transcription: bool = False
    # LoRA adapters served beside the model (`--lora-modules NAME=PATH`): name -> path.
    lora_adapters: dict[str, str] = Field(default_factory=dict)
    # VLLM_SERVER_DEV_MODE (+ VLLM_ALLOW_RUNTIME_LORA_UPDATING): the operator routes exist.
    dev_mode: bool = False
    # `--enable-scale-out`: /inference/v1/generate and the render routes answer (else a 403).
    enable_scale_out: bool = False
    # Length of the pooling runner's vectors (the tiny Llama's hidden size).
    embedding_size: int = Field(default=128, ge=1)
    scripted_path_probability: float = Field(default=0.97, gt=0, lt=1)
    log_level: str = "warning"
    timing: TimingConfig = Field(default_factory=TimingConfig)
    prefix_cache: PrefixCacheConfig = Field(default_factory=PrefixCacheConfig)
    unscripted: UnscriptedConfig = Field(default_factory=UnscriptedConfig)
    scenarios: list[Scenario] = Field(default_factory=list)
    faults: FaultConfig = Field(default_factory=FaultConfig)

    @classmethod
    def from_yaml(cls, path: str | Path) -> SimulatorConfig:
        """Read a YAML file; an empty file means all defaults."""
        return cls.load(path)

    @classmethod
    def load(
        cls, path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
    ) -> SimulatorConfig:
        """YAML (if any) with dotted-key overrides applied, e.g. `timing.max_num_seqs`."""
        data: Any = {}
        if path is not None:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        for dotted, value in (overrides or {}).items():
            *parents, leaf = dotted.split(".")
            node = data
            for key in parents:
                node = node.setdefault(key, {})
            node[leaf] = value
        return cls.model_validate(data)

    def to_yaml(self) -> str:
        """The YAML form that `from_yaml` reads back unchanged."""
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)
