"""Streams measured with vLLM's own serving benchmark client against the real vLLM (CPU build)."""
