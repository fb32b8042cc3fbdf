"""The simulated inference engine: scheduler, batch clock and per-sequence state."""
