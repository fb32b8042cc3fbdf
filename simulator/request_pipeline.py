"""From a validated request to a ready job: sampling settings, outputs per choice, engine handle."""

from __future__ import annotations

import secrets
import time

from starlette.datastructures import Headers

from simulator.choices import Choice, PromptInfo, ResponseJob, ResponseOptions
from simulator.engine.sequence import RequestHandle
from simulator.generation import GeneratedOutput, PseudoSource, ScriptedSource, generate
from simulator.generation_cache import is_deterministic
from simulator.prefix_cache import block_hashes
from simulator.protocol import SamplingFields
from simulator.sampling import SamplingSettings, choice_rng, choose_weighted
from simulator.scenarios import CompiledScenario
from simulator.state import SimulatorState


def sampling_settings(
    request: SamplingFields, max_tokens: int, top_logprobs: int | None
) -> SamplingSettings:
    """The sampler's view of a request (vLLM defaults: T=1, top_p=1, no top-k)."""
    stop = request.stop
    stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
    return SamplingSettings(
        temperature=1.0 if request.temperature is None else request.temperature,
        top_p=1.0 if request.top_p is None else request.top_p,
        top_k=max(request.top_k or 0, 0),
        seed=request.seed,
        max_tokens=max_tokens,
        min_tokens=request.min_tokens,
        stop=tuple(s for s in stops if s),
        stop_token_ids=frozenset(request.stop_token_ids or ()),
        include_stop_str_in_output=request.include_stop_str_in_output,
        ignore_eos=request.ignore_eos,
        top_logprobs=top_logprobs,
    )


def response_id(prefix: str, headers: Headers, request: SamplingFields) -> str:
    """`X-Request-Id` header, else the body's request_id, else random hex."""
    base = headers.get("x-request-id") or request.request_id or secrets.token_hex(8)
    return f"{prefix}-{base}"


def response_options(
    state: SimulatorState,
    request: SamplingFields,
    rid: str,
    top_logprobs: int | None,
    received: float = 0.0,
) -> ResponseOptions:
    """Shape flags of the response, from the request and the server flags."""
    config = state.config
    stream = bool(request.stream)
    include_usage = continuous = False
    if stream and config.enable_force_include_usage:
        # Forced usage is continuous too, whatever the request says.
        include_usage = continuous = True
    elif stream and request.stream_options is not None:
        include_usage = bool(request.stream_options.include_usage)
        continuous = include_usage and bool(request.stream_options.continuous_usage_stats)
    state.stats.record_priority(rid, request.priority)
    return ResponseOptions(
        response_id=rid,
        created=int(time.time()),
        model=state.check_model(getattr(request, "model", None)),
        fingerprint=config.system_fingerprint,
        stream=stream,
        include_usage=include_usage,
        continuous_usage=continuous,
        per_request_metrics=config.enable_per_request_metrics,
        prompt_details=config.enable_prompt_tokens_details,
        top_logprobs=top_logprobs,
        as_token_ids=bool(request.return_tokens_as_token_ids),
        return_token_ids=bool(request.return_token_ids),
        prompt_logprobs=request.prompt_logprobs,
        received=received,
        priority=request.priority,
    )


def _choice_output(
    state: SimulatorState,
    scenario: CompiledScenario | None,
    key: int,
    prompt: PromptInfo,
    settings: SamplingSettings,
    index: int,
) -> GeneratedOutput:
    """One choice's output, reused for a repeated deterministic request."""

    def run() -> GeneratedOutput:
        rng = choice_rng(settings, index, key)
        unscripted = state.config.unscripted
        low = min(unscripted.min_tokens, unscripted.max_tokens)
        length = rng.randint(low, max(unscripted.max_tokens, low))
        fallback = PseudoSource(state.pseudo_model, key, settings, rng, length)
        source: PseudoSource | ScriptedSource = fallback
        if scenario is not None:
            answer = choose_weighted(scenario.trie.weights, settings, rng)
            source = ScriptedSource(scenario.trie, answer, fallback)
        return generate(state.tokenizer, source, settings)

    if not is_deterministic(settings):
        return run()
    cache_key = (prompt.text, tuple(prompt.token_ids), index, settings)
    return state.generations.get_or_generate(cache_key, run)


def build_job(
    state: SimulatorState,
    prompts: list[PromptInfo],
    settings: SamplingSettings,
    n: int,
    options: ResponseOptions,
    cache_salt: str | None = None,
) -> ResponseJob:
    """Generate every choice's output now; the engine will reveal it at its own pace."""
    handle = RequestHandle(
        use_prefix_cache=options.prompt_logprobs is None,
        max_tokens=settings.max_tokens,
        arrival=options.received,
        priority=options.priority,
    )
    model = state.pseudo_model
    block_size = state.cache.block_size
    choices: list[Choice] = []
    for prompt in prompts:
        scenario = state.scenarios.match(prompt.text, prompt.messages)
        key = model.prompt_key(prompt.token_ids)
        hashes = block_hashes(prompt.token_ids, block_size, cache_salt)
        for _ in range(n):
            index = len(choices)
            output = _choice_output(state, scenario, key, prompt, settings, index)
            sequence = handle.add(
                len(output.token_ids), output.finish_reason, len(prompt.token_ids), hashes
            )
            choices.append(Choice(index, output, sequence, prompt))
    return ResponseJob(options, handle, choices, prompts)
