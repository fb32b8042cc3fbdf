"""Governance of spend and access: budgets per team and key."""
