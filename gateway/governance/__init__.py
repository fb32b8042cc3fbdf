"""Governance of a shared gateway: model access, spend budgets, load shedding and vLLM priority."""
