"""CPU the gateway spends per streamed token: `python -m bench.stream_cpu`."""
