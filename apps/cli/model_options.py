"""The `--models` and `--all-models` options the teams and keys commands share."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from apps.cli.admin_context import fail

ModelsOption = Annotated[
    str | None,
    typer.Option(
        "--models",
        help="Models it may call: names or patterns, comma-separated, e.g. 'llama-8b*,qwen-7b'",
    ),
]
AllModelsOption = Annotated[
    bool, typer.Option("--all-models", help="Clear the model list: every configured model")
]


def model_values(models: str | None, all_models: bool) -> dict[str, Any]:
    """`{"allowed_models": [...]}` from the options (None to clear), or {} when neither is given."""
    if models is not None and all_models:
        fail("give --models or --all-models, not both")
    if all_models:
        return {"allowed_models": None}
    if models is None:
        return {}
    patterns = [part.strip() for part in models.split(",") if part.strip()]
    if not patterns:
        fail("--models needs at least one name or pattern (--all-models allows every model)")
    return {"allowed_models": patterns}


def shown(patterns: list[str] | None, unset: str = "all") -> str:
    """A model list as the listings print it (`unset` where it has none)."""
    return ",".join(patterns) if patterns else unset
