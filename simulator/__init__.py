"""A simulated vLLM 0.32 server, wire-identical to the real one, for tests and demos."""
