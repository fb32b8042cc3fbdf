"""Everything one simulator app owns, built by `create_app` and replaced in parts by admins."""

from __future__ import annotations

import random

from starlette.datastructures import Headers

from simulator.cache_config_info import cache_config_labels
from simulator.config import FaultConfig, Scenario, SimulatorConfig, TimingConfig
from simulator.engine.scheduler import Engine
from simulator.errors import ApiError
from simulator.faults import FAULT_HEADER, FaultPlan, draw_faults, parse_fault_header
from simulator.generation_cache import GenerationCache
from simulator.metrics import EngineMetrics
from simulator.prefix_cache import PrefixCache
from simulator.pseudo_embedder import PseudoEmbedder
from simulator.pseudo_model import PseudoModel
from simulator.responses_store import ResponseStore
from simulator.scenarios import ScenarioBook
from simulator.sim_stats import SimStats
from simulator.tokenizer import Tokenizer


class SimulatorState:
    """Tokenizer, models, engine, metrics, scenarios, faults and stats of one app."""

    def __init__(self, config: SimulatorConfig) -> None:
        self.config = config
        self.tokenizer = Tokenizer()
        self.pseudo_model = PseudoModel(self.tokenizer)
        cache_config = config.prefix_cache
        self.cache = PrefixCache(
            cache_config.block_size, cache_config.num_blocks, enabled=cache_config.enabled
        )
        self.engine = Engine(config.timing, self.cache, self._build_metrics)
        self.stats = SimStats()
        self.scenarios = self._compile(config.scenarios)
        self.generations = GenerationCache()
        self.responses = ResponseStore()
        self.embedder = PseudoEmbedder(config.embedding_size)
        self.faults = config.faults
        # What the operator routes change at run time.
        self.lora_adapters = dict(config.lora_adapters)
        self.sleeping = False
        self.paused = False
        self._fault_rng = random.Random(config.faults.seed)

    def _build_metrics(self, engine: Engine) -> EngineMetrics:
        cache = self.config.prefix_cache
        return EngineMetrics(
            self.config.model_name,
            self.config.engine_id,
            cache_config_labels(cache, self.config.max_model_len),
            running=lambda: float(len(engine.running)),
            waiting=lambda: float(len(engine.waiting)),
            kv_usage=engine.kv_usage,
        )

    def _compile(self, scenarios: list[Scenario]) -> ScenarioBook:
        return ScenarioBook(
            scenarios,
            self.tokenizer,
            path_probability=self.config.scripted_path_probability,
            filler_pool=self.pseudo_model.pool,
        )

    def set_scenarios(self, scenarios: list[Scenario]) -> None:
        """Replace the scripted scenarios for requests that arrive from now on."""
        self.scenarios = self._compile(scenarios)
        self.generations.clear()

    def set_faults(self, faults: FaultConfig) -> None:
        """Replace the fault settings; switching the engine dead fails what is in flight."""
        self.faults = faults
        if faults.seed is not None:
            self._fault_rng = random.Random(faults.seed)
        if faults.engine_dead:
            self.engine.fail_all()

    def set_timing(self, timing: TimingConfig) -> None:
        """Replace the timing model from the next engine step on."""
        self.engine.timing = timing

    def check_model(self, model: str | None) -> str:
        """The served name; a different model name is vLLM's 404."""
        name = self.config.model_name
        if model is not None and model in self.lora_adapters:
            return model
        if model is not None and model != name:
            raise ApiError(
                f"The model `{model}` does not exist. Valid aliases: {name}.",
                status=404,
                param="model",
            )
        return name

    def fault_plan(self, headers: Headers) -> FaultPlan:
        """Faults for one request: forced by header, else drawn at the configured rates."""
        forced = headers.get(FAULT_HEADER)
        plan = parse_fault_header(forced) if forced else draw_faults(self.faults, self._fault_rng)
        plan.engine_dead = plan.engine_dead or self.faults.engine_dead
        return plan
