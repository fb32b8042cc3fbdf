"""Celery tasks: thin, named, idempotent; ids in, a service call inside, enqueue after commit."""
