"""Alembic migrations for Postgres and SQLite."""
