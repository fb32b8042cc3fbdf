"""Tests against a real vLLM (CPU build) serving the tiny random-weight model."""
