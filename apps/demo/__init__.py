"""`plumbline demo`: the whole story on the embedded default, with no external service."""
