"""Celery workers: eval fan-out, scoring and alerts, schedules, notifications, live sampling."""

from workers.app import create_celery_app

__all__ = ["create_celery_app"]
