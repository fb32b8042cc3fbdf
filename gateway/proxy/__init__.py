"""The OpenAI-compatible proxy endpoints and how they relay bodies and streams."""
