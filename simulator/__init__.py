"""A simulated vLLM 0.32 server, wire-identical to the real one, for tests and demos."""

from simulator.app import create_app
from simulator.config import SimulatorConfig
from simulator.process import SimulatorProcess

__all__ = ["SimulatorConfig", "SimulatorProcess", "create_app"]
