"""Answer specifications (a suite's or a sampled feature's `answer:`) and their text rules."""
