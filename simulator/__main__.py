"""`python -m simulator`: serve the simulated vLLM server."""

from __future__ import annotations

import argparse

from simulator.server import serve


def main() -> None:
    """Parse the command line and serve."""
    parser = argparse.ArgumentParser(prog="python -m simulator", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--config", default=None, help="simulator YAML")
    parser.add_argument("--fd", type=int, default=None, help="inherited listening socket")
    args = parser.parse_args()
    serve(host=args.host, port=args.port, config_path=args.config, fd=args.fd)


if __name__ == "__main__":
    main()
