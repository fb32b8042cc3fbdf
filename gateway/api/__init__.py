"""The read API under /api: calls, usage and (later) evals, scoped to the caller's team."""
