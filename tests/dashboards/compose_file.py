"""docker-compose.yml as Compose reads it: variables interpolated, mounts and ports resolved."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from tests.dashboards.dashboard_files import COMPOSE_FILE, REPO

# Stand-ins for the secrets an operator must provide.
OPERATOR_ENV = {
    "PLUMBLINE_KEY_SALT": "salt-from-the-operator",
    "POSTGRES_PASSWORD": "postgres-password",
    "GRAFANA_ADMIN_PASSWORD": "grafana-admin-password",
    "GRAFANA_DB_PASSWORD": "grafana-db-password",
}
_VARIABLE = re.compile(r"\$\{(\w+)(?:(:?[-?])([^}]*))?\}")


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error} and ${VAR?error}."""

    def value(match: re.Match[str]) -> str:
        name, operator, argument = match.groups()
        present = name in env and (env[name] != "" or operator in (None, "-", "?"))
        if present:
            return env[name]
        if operator and operator.endswith("?"):
            raise ValueError(f"{name}: {argument}")
        return argument or ""

    return _VARIABLE.sub(value, text).replace("$$", "$")


def load_compose(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The compose file with the operator's variables filled in."""
    text = interpolate(COMPOSE_FILE.read_text(), OPERATOR_ENV if env is None else env)
    document: dict[str, Any] = yaml.safe_load(text)
    return document


def required_variables() -> set[str]:
    """Variables the file refuses to run without (${VAR:?...})."""
    return {m.group(1) for m in _VARIABLE.finditer(COMPOSE_FILE.read_text()) if m.group(2) == ":?"}


def bind_mounts(service: dict[str, Any]) -> dict[str, Path]:
    """Container path -> host path of the service's bind mounts (relative to the repo)."""
    mounts = {}
    for volume in service.get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            mounts[target] = (REPO / source).resolve()
    return mounts


def host_path(service: dict[str, Any], container_path: str) -> Path:
    """Where a file the container reads comes from on the host."""
    for target, source in bind_mounts(service).items():
        if container_path == target or container_path.startswith(target.rstrip("/") + "/"):
            return source / Path(container_path).relative_to(target)
    raise AssertionError(f"{container_path} is not bind-mounted")


def option(command: list[str], name: str) -> str:
    """The value after `--name` (or in `--name=value`) in a command line."""
    for index, arg in enumerate(command):
        if arg == name:
            return command[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    raise AssertionError(f"{name} not in {command}")


def listening_port(service: dict[str, Any]) -> int:
    """The port a service's process listens on inside the network."""
    command = service.get("command", [])
    image = service["image"]
    if image.startswith("prom/prometheus"):
        return int(option(command, "--web.listen-address").rsplit(":", 1)[1])
    if "--port" in command:
        return int(option(command, "--port"))
    defaults = {"postgres": 5432, "redis": 6379, "grafana/grafana": 3000}
    return next(port for prefix, port in defaults.items() if image.startswith(prefix))


def resolve_host(services: dict[str, Any], host: str) -> list[str]:
    """Services reachable under a host name: by service name or network alias."""
    found = [name for name in services if name == host]
    for name, service in services.items():
        networks = service.get("networks", {})
        if isinstance(networks, dict):
            for network in networks.values():
                if host in (network or {}).get("aliases", []):
                    found.append(name)
    return found
