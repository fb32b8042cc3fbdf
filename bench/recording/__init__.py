"""Recording scenario: the log sink's write rate, bytes per logged token, backlog replay."""
