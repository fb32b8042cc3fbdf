"""Plumbline: observability gateway and answer-stability evals for self-hosted LLMs."""

__version__ = "0.1.0"
