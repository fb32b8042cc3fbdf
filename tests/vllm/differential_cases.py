"""The requests the differential test sends to both the real vLLM and the simulator."""

from __future__ import annotations

from typing import Any

CHAT, CMPL = "/v1/chat/completions", "/v1/completions"
MESSAGES: list[Any] = [{"role": "user", "content": "What is the capital of France?"}]
PROMPT = "The quick brown"
TOO_LONG = "The quick brown fox jumps over the lazy dog. " * 120
BASE: dict[str, Any] = {"model": "tiny", "temperature": 0, "ignore_eos": True, "max_tokens": 5}
SEEDED: dict[str, Any] = {"model": "tiny", "seed": 3, "ignore_eos": True, "max_tokens": 4}
STREAM: dict[str, Any] = {**BASE, "stream": True}
CHAT_BASE: dict[str, Any] = {**BASE, "messages": MESSAGES}
CMPL_BASE: dict[str, Any] = {**BASE, "prompt": PROMPT}
ECHO: dict[str, Any] = {
    **BASE,
    "messages": [*MESSAGES, {"role": "assistant", "content": "Paris"}],
    "echo": True,
    "add_generation_prompt": False,
}
USAGE = {"include_usage": True}
# Numeric fields that all fail the schema at once: more errors than vLLM lists (10).
MANY_NUMBERS = (
    "n",
    "seed",
    "temperature",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_k",
    "min_tokens",
    "repetition_penalty",
    "priority",
    "max_completion_tokens",
    "max_tokens",
)
CONTINUOUS = {"include_usage": True, "continuous_usage_stats": True}
# The request modes the gateway and evals use, and the errors they meet.
MODE_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat": (CHAT, CHAT_BASE),
    "chat_logprobs": (CHAT, {**CHAT_BASE, "logprobs": True}),
    "chat_top3": (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": 3}),
    "chat_top_null": (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": None}),
    "chat_n2": (CHAT, {**SEEDED, "messages": MESSAGES, "n": 2, "logprobs": True}),
    "chat_echo": (CHAT, ECHO),
    "chat_echo_top2": (CHAT, {**ECHO, "logprobs": True, "top_logprobs": 2}),
    "chat_prompt_logprobs": (CHAT, {**CHAT_BASE, "prompt_logprobs": 2}),
    "chat_token_ids": (CHAT, {**CHAT_BASE, "return_token_ids": True}),
    "chat_stream": (CHAT, {**STREAM, "messages": MESSAGES}),
    "chat_stream_usage": (CHAT, {**STREAM, "messages": MESSAGES, "stream_options": USAGE}),
    "chat_stream_continuous": (
        CHAT,
        {**STREAM, "messages": MESSAGES, "stream_options": CONTINUOUS},
    ),
    "chat_stream_continuous_only": (
        CHAT,
        {**STREAM, "messages": MESSAGES, "stream_options": {"continuous_usage_stats": True}},
    ),
    "chat_stream_top2": (
        CHAT,
        {**STREAM, "messages": MESSAGES, "logprobs": True, "top_logprobs": 2},
    ),
    "chat_stream_n2": (
        CHAT,
        {**SEEDED, "messages": MESSAGES, "n": 2, "stream": True, "stream_options": USAGE},
    ),
    "chat_stream_echo": (CHAT, {**ECHO, "stream": True}),
    "chat_stream_prompt_logprobs_0": (
        CHAT,
        {**STREAM, "messages": MESSAGES, "prompt_logprobs": 0},
    ),
    "chat_stream_token_ids": (
        CHAT,
        {**STREAM, "messages": MESSAGES, "return_token_ids": True, "stream_options": USAGE},
    ),
    "cmpl": (CMPL, CMPL_BASE),
    "cmpl_logprobs": (CMPL, {**CMPL_BASE, "logprobs": 3}),
    "cmpl_echo": (CMPL, {**CMPL_BASE, "echo": True}),
    "cmpl_echo_logprobs": (CMPL, {**CMPL_BASE, "echo": True, "logprobs": 1}),
    "cmpl_n2": (CMPL, {**SEEDED, "prompt": PROMPT, "n": 2}),
    "cmpl_prompts": (CMPL, {**BASE, "prompt": [PROMPT, "Hello"]}),
    "cmpl_stream": (CMPL, {**STREAM, "prompt": PROMPT}),
    "cmpl_stream_usage": (CMPL, {**STREAM, "prompt": PROMPT, "stream_options": USAGE}),
    "cmpl_stream_continuous": (
        CMPL,
        {**STREAM, "prompt": PROMPT, "stream_options": CONTINUOUS},
    ),
    "cmpl_stream_continuous_only": (
        CMPL,
        {**STREAM, "prompt": PROMPT, "stream_options": {"continuous_usage_stats": True}},
    ),
    "cmpl_stream_logprobs": (CMPL, {**STREAM, "prompt": PROMPT, "logprobs": 2}),
    "cmpl_stream_echo": (CMPL, {**STREAM, "prompt": PROMPT, "echo": True, "logprobs": 1}),
    "cmpl_stream_n2": (
        CMPL,
        {**SEEDED, "prompt": PROMPT, "n": 2, "stream": True, "stream_options": USAGE},
    ),
    "err_unknown_model": (CHAT, {**CHAT_BASE, "model": "nope"}),
    "err_unknown_model_cmpl": (CMPL, {**CMPL_BASE, "model": "nope"}),
    "err_validation": (CHAT, {**BASE, "messages": "oops"}),
    "err_validation_union": (CMPL, {**BASE, "prompt": {"a": 1}}),
    "err_validation_number": (CHAT, {**CHAT_BASE, "max_tokens": "many"}),
    "err_missing_messages": (CHAT, {"model": "tiny"}),
    "err_too_long_chat": (CHAT, {**BASE, "messages": [{"role": "user", "content": TOO_LONG}]}),
    "err_too_long_cmpl": (CMPL, {**BASE, "prompt": TOO_LONG}),
    "err_too_long_stream": (CHAT, {**STREAM, "messages": [{"role": "user", "content": TOO_LONG}]}),
    "err_max_tokens_huge": (CHAT, {**CHAT_BASE, "max_tokens": 100000}),
    "err_max_tokens_huge_cmpl": (CMPL, {**CMPL_BASE, "max_tokens": 100000}),
    "err_max_tokens_zero": (CHAT, {**CHAT_BASE, "max_tokens": 0}),
    "err_top_logprobs_25": (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": 25}),
    "err_cmpl_logprobs_25": (CMPL, {**CMPL_BASE, "logprobs": 25}),
    "err_top_logprobs_without_logprobs": (CHAT, {**CHAT_BASE, "top_logprobs": 2}),
    "err_top_logprobs_negative": (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": -2}),
    "err_top_logprobs_text": (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": "x"}),
    "err_prompt_logprobs_negative": (CHAT, {**CHAT_BASE, "prompt_logprobs": -2}),
    "err_prompt_logprobs_stream": (CHAT, {**STREAM, "messages": MESSAGES, "prompt_logprobs": 1}),
    "err_stream_options_without_stream": (CHAT, {**CHAT_BASE, "stream_options": USAGE}),
    "err_stream_options_without_stream_cmpl": (CMPL, {**CMPL_BASE, "stream_options": USAGE}),
    "err_n2_greedy": (CHAT, {**CHAT_BASE, "n": 2}),
    "err_n2_greedy_cmpl": (CMPL, {**CMPL_BASE, "n": 2}),
    "err_negative_temperature": (CHAT, {**CHAT_BASE, "temperature": -1}),
}
RAW_BODIES: dict[str, tuple[str, bytes]] = {
    "err_bad_json": (CHAT, b"{not json"),
    "err_bad_json_cmpl": (CMPL, b'{"model": "tiny", "prompt": }'),
    "err_empty_body": (CHAT, b""),
}


# Accepted edge values, more errors, and which error wins when several apply.
EDGE_CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "chat_empty_stream_options": (CHAT, {**CHAT_BASE, "stream_options": {}}),
    "chat_stream_empty_stream_options": (
        CHAT,
        {**STREAM, "messages": MESSAGES, "stream_options": {}},
    ),
    "chat_max_completion_tokens": (CHAT, {**CHAT_BASE, "max_completion_tokens": 3}),
    "chat_stream_n2_logprobs": (
        CHAT,
        {**SEEDED, "messages": MESSAGES, "n": 2, "stream": True, "logprobs": True},
    ),
    "cmpl_empty_string_in_list": (CMPL, {**BASE, "prompt": [""]}),
    "cmpl_token_ids": (CMPL, {**BASE, "prompt": [1, 45, 78]}),
    "err_n_zero": (CHAT, {**CHAT_BASE, "n": 0}),
    "err_temperature_over_2": (CHAT, {**CHAT_BASE, "temperature": 3}),
    "err_top_p_zero": (CHAT, {**CHAT_BASE, "top_p": 0}),
    "err_top_k": (CHAT, {**CHAT_BASE, "top_k": -2}),
    "err_min_tokens_over_max": (CHAT, {**CHAT_BASE, "min_tokens": 9}),
    "err_presence_penalty": (CHAT, {**CHAT_BASE, "presence_penalty": 3}),
    "err_top_logprobs_fraction": (CHAT, {**CHAT_BASE, "logprobs": True, "top_logprobs": 2.5}),
    "err_prompt_logprobs_21": (CHAT, {**CHAT_BASE, "prompt_logprobs": 21}),
    "err_cmpl_logprobs_negative": (CMPL, {**CMPL_BASE, "logprobs": -2}),
    "err_cmpl_logprobs_text": (CMPL, {**CMPL_BASE, "logprobs": "x"}),
    "err_cmpl_missing_prompt": (CMPL, {**BASE}),
    "err_cmpl_no_prompts": (CMPL, {**BASE, "prompt": []}),
    "err_cmpl_empty_token_list": (CMPL, {**BASE, "prompt": [[]]}),
    "err_cmpl_token_out_of_vocab": (CMPL, {**BASE, "prompt": [1, 10**7]}),
    "err_cmpl_suffix": (CMPL, {**CMPL_BASE, "suffix": "!"}),
    "err_many_schema_errors": (CHAT, {**CHAT_BASE, **dict.fromkeys(MANY_NUMBERS, "bad")}),
    "err_long_schema_input": (CHAT, {**BASE, "messages": "x" * 300}),
    "first_raw_check_before_schema": (CHAT, {**BASE, "messages": "oops", "top_logprobs": 2}),
    "first_model_before_sampling": (CHAT, {**CHAT_BASE, "model": "nope", "n": 2}),
    "first_context_before_max_tokens": (
        CHAT,
        {**BASE, "messages": [{"role": "user", "content": TOO_LONG}], "max_tokens": 0},
    ),
    "first_max_tokens_before_greedy_n": (CHAT, {**CHAT_BASE, "max_tokens": 0, "n": 2}),
    "first_greedy_n_before_logprob_count": (
        CHAT,
        {**CHAT_BASE, "n": 2, "logprobs": True, "top_logprobs": 21},
    ),
    "first_stream_options_before_logprobs_cmpl": (
        CMPL,
        {**CMPL_BASE, "stream_options": USAGE, "logprobs": -2},
    ),
    "first_prompt_before_stream_options_cmpl": (
        CMPL,
        {**BASE, "prompt": "", "stream_options": USAGE},
    ),
}
CASES = {**MODE_CASES, **EDGE_CASES}
