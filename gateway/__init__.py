"""OpenAI-compatible proxy that meters and records every call."""
