"""Celery workers: eval fan-out, schedules, alerts, notifications, live sampling."""
