"""Database plumbing shared by gateway, evals and workers."""

from plumbline.db.base import Base
from plumbline.db.engine import create_db_engine, make_session_factory, normalize_url

__all__ = ["Base", "create_db_engine", "make_session_factory", "normalize_url"]
