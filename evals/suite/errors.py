"""Suite validation errors that name the YAML line and the field path."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SuiteProblem:
    """One thing wrong with a suite: where (line, field path) and what."""

    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}, {self.path}" if self.line is not None else self.path
        return f"{where}: {self.message}"


class SuiteError(ValueError):
    """A suite that cannot be used; `problems` lists each issue, the message shows them all."""

    def __init__(self, problems: list[SuiteProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
