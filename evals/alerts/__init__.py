"""Alerts: decide them on a scored run, notify channels, deliver, list and acknowledge them."""
