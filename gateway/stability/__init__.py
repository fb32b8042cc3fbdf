"""Stability reads: the SQL behind the stability report and the stability gauges."""
