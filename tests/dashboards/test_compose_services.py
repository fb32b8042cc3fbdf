"""docker-compose.yml: each service, the `plumbline` command it runs, its settings, start order."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
import typer

from apps.cli import build_app
from plumbline.settings import Settings
from tests.dashboards.compose_file import (
    OPERATOR_ENV,
    interpolate,
    load_compose,
    required_variables,
)
from tests.dashboards.dashboard_files import COMPOSE_FILE

SERVICES: dict[str, Any] = load_compose()["services"]
PLUMBLINE = sorted(name for name, s in SERVICES.items() if s["image"].startswith("plumbline:"))


def test_the_stack_has_every_part() -> None:
    assert set(SERVICES) == {
        "gateway",
        "worker",
        "beat",
        "migrate",
        "postgres",
        "redis",
        "vllm",
        "simulator",
        "prometheus",
        "grafana",
    }
    assert PLUMBLINE == ["beat", "gateway", "migrate", "simulator", "worker"]


def test_secrets_must_come_from_the_operator() -> None:
    assert required_variables() == set(OPERATOR_ENV)
    with pytest.raises(ValueError, match="PLUMBLINE_KEY_SALT"):
        interpolate(
            COMPOSE_FILE.read_text(),
            {k: v for k, v in OPERATOR_ENV.items() if k != "PLUMBLINE_KEY_SALT"},
        )


@pytest.mark.parametrize("name", PLUMBLINE)
def test_service_runs_a_real_plumbline_command_with_options_it_accepts(name: str) -> None:
    subcommand, *args = SERVICES[name]["command"]
    helped = subprocess.run(
        [sys.executable, "-m", "apps.cli", subcommand, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert helped.returncode == 0, helped.stderr
    for arg in args:
        if arg.startswith("--"):
            assert arg.split("=")[0] in helped.stdout, f"{name}: {arg} not in `{subcommand} --help`"
    group = typer.main.get_command(build_app())
    assert isinstance(group, typer.core.TyperGroup)
    command = group.commands[subcommand]
    with command.make_context(subcommand, list(args)) as context:  # rejects unknown options
        assert context.params is not None


def settings_path(key: str) -> list[str]:
    """PLUMBLINE_EVAL__API_KEY -> ["eval", "api_key"]."""
    return key.removeprefix("PLUMBLINE_").lower().split("__")


@pytest.mark.parametrize("name", PLUMBLINE)
def test_environment_is_valid_plumbline_settings(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env: dict[str, str] = SERVICES[name]["environment"]
    for key in [k for k in env if k.startswith("PLUMBLINE_")]:
        model: Any = Settings
        for part in settings_path(key):  # a misspelt key would be silently ignored
            assert part in model.model_fields, f"{key} is no Plumbline setting"
            model = model.model_fields[part].annotation
        monkeypatch.setenv(key, env[key])
    settings = Settings()
    database = settings.database.url
    postgres = SERVICES["postgres"]["environment"]
    assert database == (
        f"postgresql://{postgres['POSTGRES_USER']}:{postgres['POSTGRES_PASSWORD']}"
        f"@postgres:5432/{postgres['POSTGRES_DB']}"
    )
    assert settings.redis.url == "redis://redis:6379/0"
    assert settings.key_salt.get_secret_value() == OPERATOR_ENV["PLUMBLINE_KEY_SALT"]
    assert settings.eval.gateway_url == "http://gateway:8080"


def condition(service: str, dependency: str) -> str:
    """The condition `service` waits for on `dependency`."""
    depends: Any = SERVICES[service]["depends_on"]
    return str(depends[dependency]["condition"])


def test_start_order_migrates_before_anything_uses_the_database() -> None:
    assert condition("migrate", "postgres") == "service_healthy"
    for name in ("gateway", "worker", "beat"):
        assert condition(name, "migrate") == "service_completed_successfully"
    for name in ("worker", "beat"):
        assert condition(name, "redis") == "service_healthy"
    assert condition("worker", "gateway") == "service_healthy"
    assert SERVICES["migrate"]["restart"] == "no"
    for name in ("postgres", "redis", "gateway"):
        assert SERVICES[name]["healthcheck"]["test"], name
