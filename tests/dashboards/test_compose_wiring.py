"""docker-compose.yml: mounted files exist and agree with each other, hosts and ports line up."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from gateway.config import GatewayConfig, load_gateway_config
from simulator.config import SimulatorConfig
from tests.dashboards.compose_file import (
    bind_mounts,
    host_path,
    listening_port,
    load_compose,
    option,
    resolve_host,
)
from tests.dashboards.dashboard_files import GRAFANA_DASHBOARDS, PROVISIONING, REPO, RULE_FILES

COMPOSE = load_compose()
SERVICES: dict[str, Any] = COMPOSE["services"]


def reachable(host_port: str) -> None:
    """A host:port some service answers on inside the compose network."""
    host, port = host_port.rsplit(":", 1)
    names = resolve_host(SERVICES, host)
    assert names, f"no service or alias called {host!r}"
    for name in names:
        assert listening_port(SERVICES[name]) == int(port), f"{name} does not listen on {port}"


def gateway_config() -> GatewayConfig:
    """The gateway config file the gateway container is given."""
    gateway = SERVICES["gateway"]
    return load_gateway_config(host_path(gateway, option(gateway["command"], "--config")))


def test_every_mounted_file_exists_and_named_volumes_are_declared() -> None:
    for name, service in SERVICES.items():
        for target, source in bind_mounts(service).items():
            assert source.exists(), f"{name}: {source} (mounted at {target}) is missing"
            assert source.is_relative_to(REPO)
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if not source.startswith("."):
                assert source in COMPOSE["volumes"], f"{name}: volume {source} not declared"


def test_the_gateway_config_validates_and_its_backends_are_services() -> None:
    config = gateway_config()
    for model in config.models:
        for backend in model.backends:
            reachable(urlsplit(backend.url).netloc)
    spool = str(config.recording.spool_dir)
    volumes = [v.split(":") for v in SERVICES["gateway"]["volumes"]]
    assert any(target == spool and source in COMPOSE["volumes"] for source, target, *_ in volumes)
    assert (
        "gateway:8080"
        == urlsplit(SERVICES["worker"]["environment"]["PLUMBLINE_EVAL__GATEWAY_URL"]).netloc
    )
    reachable("gateway:8080")


def test_vllm_serves_the_gateway_model_with_the_flags_it_needs() -> None:
    vllm = SERVICES["vllm"]
    assert vllm["image"].startswith("vllm/vllm-openai:")
    command = vllm["command"]
    served = {m.served_name for m in gateway_config().models}
    assert option(command, "--model") in served
    for flag in ("--enable-per-request-metrics", "--enable-prompt-tokens-details"):
        assert flag in command
    assert option(command, "--max-logprobs") == "20"
    device = vllm["deploy"]["resources"]["reservations"]["devices"][0]
    assert device["capabilities"] == ["gpu"] and device["driver"] == "nvidia"


def test_the_simulator_profile_stands_in_for_vllm_unchanged() -> None:
    simulator, vllm = SERVICES["simulator"], SERVICES["vllm"]
    assert simulator["profiles"] == ["simulator"] and vllm["profiles"] == ["gpu"]
    assert "vllm" in simulator["networks"]["default"]["aliases"]
    config = SimulatorConfig.from_yaml(
        host_path(simulator, option(simulator["command"], "--config"))
    )
    assert config.model_name == option(vllm["command"], "--model")
    assert config.max_logprobs == int(option(vllm["command"], "--max-logprobs"))
    assert listening_port(simulator) == listening_port(vllm)


def test_prometheus_scrapes_the_services_and_loads_the_rule_files() -> None:
    prometheus = SERVICES["prometheus"]
    config_in_container = option(prometheus["command"], "--config.file")
    config = yaml.safe_load(host_path(prometheus, config_in_container).read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert {"plumbline-gateway", "vllm", "prometheus"} <= set(jobs)
    for job in jobs.values():
        assert job.get("metrics_path", "/metrics") == "/metrics"
        for target in job["static_configs"][0]["targets"]:
            if target.startswith("localhost:"):
                assert int(target.split(":")[1]) == listening_port(prometheus)
            else:
                reachable(target)
    base = Path(config_in_container).parent
    loaded = set()
    for pattern in config["rule_files"]:
        rules_dir = host_path(prometheus, str(base / Path(pattern).parent))
        loaded |= set(rules_dir.glob(Path(pattern).name))
    assert loaded == set(RULE_FILES)


def test_grafana_provisioning_points_at_the_stack() -> None:
    grafana, postgres = SERVICES["grafana"], SERVICES["postgres"]
    assert host_path(grafana, "/etc/grafana/provisioning") == PROVISIONING.resolve()
    sources = yaml.safe_load((PROVISIONING / "datasources" / "plumbline.yaml").read_text())
    by_type = {s["type"]: s for s in sources["datasources"]}
    reachable(urlsplit(by_type["prometheus"]["url"]).netloc)
    pg = by_type["grafana-postgresql-datasource"]
    reachable(pg["url"])
    assert pg["jsonData"]["database"] == postgres["environment"]["POSTGRES_DB"]
    assert pg["user"] == "${GRAFANA_DB_USER}"
    assert pg["secureJsonData"]["password"] == "${GRAFANA_DB_PASSWORD}"
    for key in ("GRAFANA_DB_USER", "GRAFANA_DB_PASSWORD"):
        assert grafana["environment"][key] == postgres["environment"][key]
    providers = yaml.safe_load((PROVISIONING / "dashboards" / "plumbline.yaml").read_text())
    folder = providers["providers"][0]["options"]["path"]
    assert host_path(grafana, folder) == GRAFANA_DASHBOARDS.resolve()
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert host_path(grafana, home).is_file()
    init = host_path(postgres, "/docker-entrypoint-initdb.d/10-grafana-reader.sh")
    assert init.name == "grafana-reader.sh"


def test_the_image_gives_the_spool_volume_to_the_user_it_runs_as() -> None:
    lines = (REPO / "Dockerfile").read_text().splitlines()
    spool = str(gateway_config().recording.spool_dir)
    prepare = next(i for i, line in enumerate(lines) if spool in line and "chown" in line)
    assert "nobody" in lines[prepare]
    assert prepare < lines.index("USER nobody")
