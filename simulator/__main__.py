"""`python -m simulator`: serve the simulated vLLM server (YAML config, flags override it)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from simulator.server import serve

# flag -> (dotted config key, type)
_OVERRIDES: Mapping[str, tuple[str, type]] = MappingProxyType(
    {
        "--model-name": ("model_name", str),
        "--max-model-len": ("max_model_len", int),
        "--max-num-seqs": ("timing.max_num_seqs", int),
        "--prefill-ms-per-token": ("timing.prefill_ms_per_token", float),
        "--decode-ms-per-token": ("timing.decode_ms_per_token", float),
        "--decode-ms-per-extra-seq": ("timing.decode_ms_per_extra_seq", float),
        "--scheduling-policy": ("timing.scheduling_policy", str),
        "--block-size": ("prefix_cache.block_size", int),
    }
)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(prog="python -m simulator", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--config", default=None, help="simulator YAML")
    parser.add_argument("--fd", type=int, default=None, help="inherited listening socket")
    for flag, (key, kind) in _OVERRIDES.items():
        parser.add_argument(flag, type=kind, default=None, help=f"overrides {key}")
    args = vars(parser.parse_args(argv))
    overrides: dict[str, Any] = {}
    for flag, (key, _) in _OVERRIDES.items():
        value = args[flag.lstrip("-").replace("-", "_")]
        if value is not None:
            overrides[key] = value
    serve(
        host=args["host"],
        port=args["port"],
        config_path=args["config"],
        fd=args["fd"],
        overrides=overrides,
    )


if __name__ == "__main__":
    main()
