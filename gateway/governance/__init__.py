"""Governance: what a key may use beyond authentication (models, and more policies to come)."""
