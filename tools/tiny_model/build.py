"""Build a tiny random-weight Llama model directory that vLLM can serve, with no hub download.

Runs with the vLLM venv's python (torch, transformers, tokenizers). Prints the model directory.
The output is cached under $PLUMBLINE_CACHE keyed by seed and a hash of this file, and the same
seed always gives byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

# Sentences the BPE tokenizer is trained on; their words become whole tokens, the rest is bytes.
CORPUS = (
    "The quick brown fox jumps over the lazy dog.",
    "A lazy dog sleeps in the warm sun while the fox runs away.",
    "What is the capital of France? The capital of France is Paris.",
    "How many days are in a week? There are seven days in a week.",
    "Two plus two is four, and three plus five is eight.",
    "The answer is yes. The answer is no. The answer is maybe.",
    "Please summarise the report in one short sentence.",
    "The gateway records every call, its tokens, its logprobs and its timings.",
    "Stability means the same question gets the same answer every time.",
    "Hello! How can I help you today? Thank you, goodbye.",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 42 100 2024.",
    "Red, green, blue, yellow, black and white are colours.",
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday",
    "January February March April May June July August September October November December",
    "def main(): return 0  # a line of code",
    '{"name": "value", "list": [1, 2, 3], "ok": true}',
)
SPECIAL_TOKENS = ("<unk>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>")
# Renders as `<s><|user|>Hi\n<|assistant|>`; a system message gets its own `<|system|>` turn.
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|{{ message['role'] }}|>{{ message['content'] }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
VOCAB_SIZE = 512
# head_dim 32 is one of the sizes vLLM's CPU attention supports; others crash on the first request.
HEAD_DIM = 32
MAX_POSITIONS = 1024
# Wider than the usual 0.02 so that logprobs are distinct, not all near -ln(vocab).
INITIALIZER_RANGE = 0.2


def script_hash() -> str:
    """Return a short hash of this file, so a changed builder never reuses an old model."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def default_cache() -> Path:
    """Return $PLUMBLINE_CACHE, or ~/.cache/plumbline."""
    return Path(os.environ.get("PLUMBLINE_CACHE") or Path.home() / ".cache" / "plumbline")


def model_dir(cache: Path, seed: int) -> Path:
    """Return where the model for this seed and builder version lives."""
    return cache / "tiny-llama" / f"seed{seed}-{script_hash()}"


def build_tokenizer(out: Path) -> int:
    """Train a byte-level BPE tokenizer on CORPUS, save it with its chat template, return size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer=trainer)
    bos_id = tok.token_to_id("<s>")
    # Like Llama: plain prompts (completions) get a BOS; the chat template writes its own.
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos_id)]
    )
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="</s>",
        model_max_length=MAX_POSITIONS,
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return int(tok.get_vocab_size())


def build_model(out: Path, seed: int, vocab_size: int) -> None:
    """Save a randomly initialised 2-layer Llama (hidden 128, 4 heads, 2 KV heads) for seed."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    special = _special_ids(out)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=HEAD_DIM,
        max_position_embeddings=MAX_POSITIONS,
        initializer_range=INITIALIZER_RANGE,
        bos_token_id=special["<s>"],
        eos_token_id=special["</s>"],
        pad_token_id=special["</s>"],
        tie_word_embeddings=False,
        # vLLM's CPU build runs bfloat16 anyway; storing it so avoids a downcast on every load.
        dtype="bfloat16",
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).to(torch.bfloat16)  # type: ignore[arg-type]
    model.save_pretrained(out, safe_serialization=True)


def _special_ids(out: Path) -> dict[str, int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    ids = {name: tok.token_to_id(name) for name in SPECIAL_TOKENS}
    return {name: int(i) for name, i in ids.items() if i is not None}


def build(cache: Path, seed: int) -> Path:
    """Return the model directory for seed, building it first unless it is cached."""
    target = model_dir(cache, seed)
    if (target / "config.json").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    # Build aside and rename, so a concurrent or interrupted build never leaves a half directory.
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        vocab_size = build_tokenizer(staging)
        build_model(staging, seed, vocab_size)
        # mkdtemp and safetensors create owner-only entries; the model is meant to be shared.
        staging.chmod(0o755)
        for path in staging.iterdir():
            path.chmod(0o644)
        try:
            staging.rename(target)
        except OSError:
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    """Build (or find) the tiny model and print its directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=None, help="default: $PLUMBLINE_CACHE")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    sys.stdout.write(f"{build(args.cache or default_cache(), args.seed)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
