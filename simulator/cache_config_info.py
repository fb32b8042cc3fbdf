"""Labels of `vllm:cache_config_info`: vLLM 0.32's cache settings, filled in for the simulator."""

from __future__ import annotations

from simulator.config import PrefixCacheConfig

_NONE_LABELS = (
    "cache_hit_alignment_tokens",
    "hash_block_size",
    "kv_cache_layout",
    "kv_offloading_size",
    "mamba_block_size",
    "mamba_page_size_padded",
    "num_cpu_blocks",
    "num_gpu_blocks_override",
    "prefix_match_unit",
    "skip_page_size_padded",
    "sliding_window",
)


def cache_config_labels(cache: PrefixCacheConfig, max_model_len: int) -> dict[str, str]:
    """Labels of `vllm:cache_config_info`, as vLLM 0.32 sets them, for this cache."""
    tokens = cache.block_size * cache.num_blocks
    labels = dict.fromkeys(_NONE_LABELS, "None")
    labels.update(
        {
            "_block_size_resolved": "True",
            "block_size": str(cache.block_size),
            "cache_dtype": "auto",
            "effective_attention_block_size": str(cache.block_size),
            "enable_mamba_shared_prefix_checkpoint": "False",
            "enable_prefix_caching": str(cache.enabled),
            "gpu_memory_utilization": "0.9",
            "is_attention_free": "False",
            "kv_sharing_fast_prefill": "False",
            "kv_cache_dtype_skip_layers": "[]",
            "kv_cache_max_concurrency": str(tokens / max_model_len),
            "kv_cache_memory_bytes": str(tokens * 131072),
            "kv_cache_size_tokens": str(tokens),
            "kv_offloading_backend": "native",
            "mamba_cache_dtype": "auto",
            "mamba_cache_mode": "none",
            "mamba_ssm_cache_dtype": "float32",
            "num_gpu_blocks": str(cache.num_blocks),
            "prefix_cache_retention_interval": "0",
            "prefix_caching_hash_algo": "sha256",
            "replayssm_buffer_len": "16",
            "swa_bounded_replay": "True",
            "use_kda_recoverssm": "False",
            "use_replayssm": "False",
            "user_specified_block_size": "False",
        }
    )
    return labels
