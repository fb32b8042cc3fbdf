"""Data lifecycle: retention classes, the retention job, and deleting an end user's data."""
