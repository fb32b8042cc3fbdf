"""Scripted scenarios compiled for lookup: the first whose regex matches the prompt text wins."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from simulator.answer_trie import AnswerTrie
from simulator.config import Scenario
from simulator.tokenizer import Tokenizer


@dataclass(frozen=True, slots=True)
class CompiledScenario:
    """A scenario's pattern and its answers' token trie."""

    name: str
    pattern: re.Pattern[str]
    trie: AnswerTrie


class ScenarioBook:
    """The current scenarios; replaced as a whole when an admin posts new ones."""

    def __init__(
        self,
        scenarios: Sequence[Scenario],
        tokenizer: Tokenizer,
        *,
        path_probability: float,
        filler_pool: Sequence[int],
    ) -> None:
        self.source = list(scenarios)
        compiled = []
        for index, scenario in enumerate(scenarios):
            answers = [[*tokenizer.encode(a.text), tokenizer.eos_id] for a in scenario.answers]
            trie = AnswerTrie(
                answers,
                [a.p for a in scenario.answers],
                path_probability=path_probability,
                filler_pool=filler_pool,
                salt=index + 1,
            )
            compiled.append(CompiledScenario(scenario.name, re.compile(scenario.match), trie))
        self._compiled = compiled

    def match(self, prompt_text: str, messages: Sequence[str] = ()) -> CompiledScenario | None:
        """The first scenario whose pattern is found in the prompt text or in one message."""
        for scenario in self._compiled:
            search = scenario.pattern.search
            if search(prompt_text) or any(search(message) for message in messages):
                return scenario
        return None
