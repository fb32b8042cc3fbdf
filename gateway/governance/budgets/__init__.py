"""Spend budgets per team and key, per UTC day and month, in memory or shared through Redis.

Nothing is re-exported here: the auth and config modules import `limits` and `config`, which
the guard itself depends on through them, so importing the guard here would be circular.
"""
