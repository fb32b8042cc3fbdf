"""Live sampling: re-ask sampled production requests and score their agreement."""
