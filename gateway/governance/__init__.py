"""Governance of shared models: load shedding by source and fair share, and vLLM priority."""
