"""Write a tiny LoRA adapter for the tiny Llama (q_proj and v_proj, rank 8), as peft saves one.

Runs with the vLLM venv's python (torch, safetensors). Prints the adapter directory. The same
seed always gives the same weights; vLLM serves it with `--enable-lora --lora-modules NAME=DIR`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

RANK = 8
HIDDEN = 128
# q_proj maps hidden -> 4 heads x 32; v_proj hidden -> 2 KV heads x 32 (tools/tiny_model/build.py).
OUT_FEATURES = {"q_proj": 128, "v_proj": 64}
LAYERS = 2


def build(out: Path, seed: int) -> Path:
    """Save the adapter under `out` (config and weights)."""
    out.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(seed)
    tensors = {}
    for layer in range(LAYERS):
        for module, features in OUT_FEATURES.items():
            stem = f"base_model.model.model.layers.{layer}.self_attn.{module}"
            a = torch.randn(RANK, HIDDEN, generator=generator) * 0.05
            b = torch.randn(features, RANK, generator=generator) * 0.05
            tensors[f"{stem}.lora_A.weight"] = a.contiguous()
            tensors[f"{stem}.lora_B.weight"] = b.contiguous()
    save_file(tensors, str(out / "adapter_model.safetensors"))
    config = {
        "peft_type": "LORA",
        "task_type": "CAUSAL_LM",
        "r": RANK,
        "lora_alpha": 16,
        "lora_dropout": 0.0,
        "bias": "none",
        "target_modules": sorted(OUT_FEATURES),
        "base_model_name_or_path": None,
        "fan_in_fan_out": False,
        "inference_mode": True,
    }
    (out / "adapter_config.json").write_text(json.dumps(config, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    """Build the adapter and print its directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.stdout.write(f"{build(args.out, args.seed)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
