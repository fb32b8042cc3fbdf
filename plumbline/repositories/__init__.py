"""Repositories the whole product shares (the kit's SQL)."""
