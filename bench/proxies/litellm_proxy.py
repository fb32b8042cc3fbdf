"""The LiteLLM proxy on loopback with a one-model config pointing at the simulator."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from bench.proxies.installed import litellm_executable
from plumbline.child_process import ServerProcess, free_port

MASTER_KEY = "sk-plumbline-bench"


class LiteLLMProxy(ServerProcess):
    """`litellm --config` with its default settings: no database, no callbacks, one worker."""

    def __init__(self, backend_url: str, model: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        work = Path(tempfile.mkdtemp(prefix="plumbline-litellm-"))
        config = work / "config.yaml"
        entry = {
            "model_name": model,
            "litellm_params": {
                "model": f"openai/{model}",
                "api_base": f"{backend_url}/v1",
                "api_key": "none",
            },
        }
        config.write_text(yaml.safe_dump({"model_list": [entry]}))
        args = [str(litellm_executable()), "--config", str(config)]
        # It binds 0.0.0.0 unless told otherwise.
        args += ["--host", "127.0.0.1", "--port", str(self.port)]
        env = {
            # It refuses to start without a master key.
            "LITELLM_MASTER_KEY": MASTER_KEY,
            # Offline: the bundled cost map, no fetch at start-up.
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        super().__init__(args, f"{self.url}/health/liveliness", env=env, startup_timeout=180.0)
        # No database: a DATABASE_URL in this environment would switch on its spend logs.
        self.env.pop("DATABASE_URL", None)
        self.headers = {"Authorization": f"Bearer {MASTER_KEY}"}
