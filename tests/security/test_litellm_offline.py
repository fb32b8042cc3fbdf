"""litellm never fetches its price map or header lists: every entry point sets its offline switches.

litellm downloads these from URLs it reads from the environment; here they name a listener the
test owns, and the parent's environment has none of the offline switches, so the listener is
contacted exactly when a process forgot to set them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from plumbline.litellm_offline import OFFLINE_SWITCHES
from tests.security.provider_listener import ProviderListener
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, issue_key

pytestmark = pytest.mark.xdist_group("security-litellm-offline")
CATALOG_URLS = (
    "LITELLM_MODEL_COST_MAP_URL",
    "LITELLM_ANTHROPIC_BETA_HEADERS_URL",
    "LITELLM_BLOG_POSTS_URL",
)


@pytest.fixture
def internet() -> Iterator[ProviderListener]:
    """A listener standing in for the internet that litellm would fetch from."""
    with ProviderListener() as listener:
        yield listener


def _online_env(internet: ProviderListener, base: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in OFFLINE_SWITCHES}
    env.update({name: f"{internet.url}/catalog.json" for name in CATALOG_URLS})
    return env


def test_the_gateway_serves_a_litellm_model_without_fetching_a_catalog(
    internet: ProviderListener, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with (
        ProviderListener() as provider,
        sqlite_database(tmp_path_factory.mktemp("litellm-offline")) as database,
    ):
        model = {
            "name": "hosted",
            "provider": "litellm",
            "litellm_model": "openai/tiny",
            "api_base": provider.url,
            "api_key": "sk-provider",
        }
        gateway = GatewayProcess({"models": [model]}, database)
        gateway.env = _online_env(internet, gateway.env)
        with gateway:
            key = issue_key(database, "team-offline")
            response = httpx.post(
                f"{gateway.url}/v1/chat/completions",
                json={"model": "hosted", "messages": [{"role": "user", "content": "hi"}]},
                headers={"Authorization": f"Bearer {key}"},
                timeout=30,
            )
        assert response.status_code == 200, response.text
        assert len(provider.seen()[1]) == 1
    assert internet.seen() == (0, [])


# Each builds one entry point's app in a fresh interpreter, then imports litellm there.
ENTRY_POINTS = {
    "gateway app": (
        "from gateway.app import create_asgi; from gateway.config import GatewayConfig; "
        "from plumbline.settings import Settings; "
        "create_asgi(Settings(), GatewayConfig(models=[{'name': 'm', 'backends': [{'url': 'http://127.0.0.1:9'}]}]))"
    ),
    "celery app": "from workers.app import create_celery_app; create_celery_app()",
    "cli": (
        "import sys; from apps.cli import main; sys.argv = ['plumbline', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    ),
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_entry_point_keeps_litellm_offline(internet: ProviderListener, entry: str) -> None:
    script = f"{ENTRY_POINTS[entry]}\nimport litellm, os\nprint(os.environ['LITELLM_OFFLINE_MODE'])"
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=_online_env(internet, dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("true")
    assert internet.seen() == (0, [])
