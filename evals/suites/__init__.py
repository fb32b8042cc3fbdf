"""Suites: import one from YAML or JSON, find it by id or name, list and show it."""
