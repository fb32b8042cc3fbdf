"""Overhead scenario: the same request mix direct, through nginx, LiteLLM and Plumbline."""
