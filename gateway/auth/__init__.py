"""API keys: creation, hashing, verification and the in-memory cache the hot path uses."""
