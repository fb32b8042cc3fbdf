"""A small HTTP/1.1 client for backends: keep-alive connections per origin, asyncio, httptools."""
