"""The two teams' suites: legal's indemnity near tie (alerting at once) and sales' stable fact."""

from __future__ import annotations

# 12 vs 24 months at 46 / 41 (and 13 "no cap"): agreement near 0.46, far below 0.9.
LEGAL_SUITE = """\
name: contracts
team: legal
model: tiny
sampling: {temperature: 1.0, max_tokens: 48, seed_policy: per_sample, seed: 11}
paraphrases_per_question: 3
samples_per_paraphrase: 8
threshold: 0.9
alert:
  suite: {consecutive: 1}
  critical: {consecutive: 1}
questions:
  - id: cap
    text: What is the indemnity cap in months under clause 9.2?
    answer: {type: number, unit: months}
    expected: 12
    critical: true
    paraphrases:
      - How many months of fees is the indemnity cap under clause 9.2?
      - Under clause 9.2, what is the indemnity cap in months?
  - id: law
    text: Which governing law applies to the agreement?
    answer:
      type: choice
      options: [england, france]
    paraphrases:
      - What is the governing law of this agreement?
"""

SALES_SUITE = """\
name: pricing
team: sales
model: tiny
sampling: {temperature: 1.0, max_tokens: 48, seed_policy: per_sample, seed: 5}
paraphrases_per_question: 2
samples_per_paraphrase: 5
threshold: 0.8
questions:
  - id: law
    text: Which governing law applies to the reseller agreement?
    answer:
      type: choice
      options: [england, france]
    paraphrases:
      - What is the governing law of the reseller agreement?
"""
