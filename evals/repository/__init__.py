"""All SQL of the evals: suites, questions, paraphrases, runs, samples, results, calls read."""
