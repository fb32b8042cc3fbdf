"""Evals scenario: wall time of a suite on Celery workers against a backend of fixed capacity."""
