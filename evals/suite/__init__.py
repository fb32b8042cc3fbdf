"""Suites: YAML schema, loader with line-numbered errors, prompts and per-request seeds."""

from evals.suite.errors import SuiteError, SuiteProblem
from evals.suite.loader import load_suite, suite_from_data
from evals.suite.prompt import ChatMessage, RenderedPrompt, format_instruction, render_prompt
from evals.suite.schema import Question, SamplingParams, SeedPolicy, Suite
from evals.suite.seeds import sample_seed

__all__ = [
    "ChatMessage",
    "Question",
    "RenderedPrompt",
    "SamplingParams",
    "SeedPolicy",
    "Suite",
    "SuiteError",
    "SuiteProblem",
    "format_instruction",
    "load_suite",
    "render_prompt",
    "sample_seed",
    "suite_from_data",
]
