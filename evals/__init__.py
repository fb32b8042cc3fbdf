"""Answer-stability evals: paraphrases x samples, agreement, divergence explained."""
