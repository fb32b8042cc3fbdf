"""A backend URL with credentials in it is refused at start-up, without echoing the secret.

The URL is stored in every call row and shown in /metrics labels and logs, so a password
written into it (http://user:password@host) would reach every reader of those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simulator.process import SimulatorProcess
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, gateway_config

PASSWORD = "backend-password-3c8e1f"


def _with_userinfo(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://operator:{PASSWORD}@{rest}"


def _litellm(backend: str) -> dict[str, Any]:
    config = gateway_config(backend)
    config["models"].append(
        {
            "name": "hosted",
            "provider": "litellm",
            "litellm_model": "openai/gpt-4o-mini",
            "api_base": _with_userinfo(backend) + "/v1",
        }
    )
    return config


@pytest.mark.parametrize("where", ["backend url", "litellm api_base"])
def test_a_url_with_credentials_stops_the_gateway_with_a_clear_message(
    where: str, tmp_path: Path
) -> None:
    with SimulatorProcess({}) as simulator, sqlite_database(tmp_path) as url:
        backend = simulator.base_url
        config = (
            gateway_config(_with_userinfo(backend)) if where == "backend url" else _litellm(backend)
        )
        gateway = GatewayProcess(config, url)
        try:
            with pytest.raises(RuntimeError, match="exited at start-up"):
                gateway.start()
        finally:
            gateway.stop()
        output = gateway.log_path.read_text(errors="replace")
    assert "must not carry credentials" in output, output
    assert "api_key" in output
    assert PASSWORD not in output
