"""`plumbline gateway --workers N`: a supervisor, N proxy workers on one socket, one /metrics."""
