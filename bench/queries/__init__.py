"""Queries scenario: the usage endpoint and the dashboards' panels over millions of calls."""
