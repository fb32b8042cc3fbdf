"""Choosing a backend for each call and keeping track of backend health and load."""
