"""A small HTTP/1.1 client for calling backends: keep-alive pools on asyncio and httptools."""
