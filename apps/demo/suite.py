"""The demo's stability suite: three contract questions, one of them a near tie."""

from __future__ import annotations

DEMO_SUITE = """\
name: contracts
team: legal
model: contracts-llm
description: High-stakes answers of the contracts assistant
sampling: {temperature: 1.0, max_tokens: 48, seed_policy: per_sample, seed: 11}
paraphrases_per_question: 4
samples_per_paraphrase: 5
threshold: 0.9
schedule: "* * * * * */20"
alert:
  critical: {consecutive: 1}
  notify: [demo-webhook]
questions:
  - id: indemnity-cap
    text: What is the indemnity cap, in months of fees, under clause 9.2?
    answer: {type: number, unit: months}
    critical: true
    paraphrases:
      - Under clause 9.2, how many months of fees is the indemnity capped at?
      - How large is the indemnity cap in clause 9.2, in months of fees?
      - Clause 9.2 caps the indemnity at how many months of fees?
  - id: governing-law
    text: Which law governs the agreement?
    answer:
      type: choice
      options: [england, france]
    paraphrases:
      - Under which country's law is the agreement governed?
      - What is the governing law of this agreement?
      - The agreement is governed by the law of which country?
  - id: notice-period
    text: What is the notice period for termination?
    answer: {type: number, unit: days}
    paraphrases:
      - How many days of notice are needed to terminate?
      - What notice period applies to termination, in days?
      - How much notice must a party give to terminate the agreement?
"""
