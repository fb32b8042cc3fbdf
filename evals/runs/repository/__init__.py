"""All SQL of runs: runs, samples, scored results, progress, finalisation claims, calls read."""
