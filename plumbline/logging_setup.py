"""Logging for Plumbline processes: one line per record, level from PLUMBLINE_LOG_LEVEL."""

from __future__ import annotations

import logging
import os


def configure_logging() -> None:
    """Configure the root logger once per process."""
    logging.basicConfig(
        level=os.environ.get("PLUMBLINE_LOG_LEVEL", "INFO").upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
