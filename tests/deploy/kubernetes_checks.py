"""What the Kubernetes schemas cannot say about deploy/kubernetes; each returns its problems."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import kubernetes_validate

from gateway.config import GatewayConfig, load_gateway_config
from gateway.recording.recorder_process import STOP_WAIT_S
from tests.deploy.kubernetes_manifests import (
    KUBERNETES_VERSION,
    Document,
    command_line,
    container_port,
    named,
    of_kind,
    option,
    probe_port,
    probes,
    selects,
    workload,
    workloads,
)

GATEWAY = ("StatefulSet", "plumbline-gateway")
GATEWAY_CONFIG = ("plumbline-gateway-config", "gateway.yaml")


def schema_problems(documents: list[Document]) -> list[str]:
    """Each document against the strict schema of KUBERNETES_VERSION (unknown fields refused)."""
    problems = []
    for document in documents:
        try:
            kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            problems.append(f"{document['kind']} {document['metadata']['name']}: {error.message}")
    return problems


def selector_problems(documents: list[Document]) -> list[str]:
    """Workload, Service and PDB selectors pick pods; the HPA and StatefulSet name real things."""
    problems = []
    pods = workloads(documents)
    for each in pods:
        selector = each.spec.get("selector", {}).get("matchLabels", {})
        if each.kind != "Job" and not selects(selector, each.pod_labels):
            problems.append(f"{each.kind} {each.name}: selector does not match its pod labels")
    for kind in ("Service", "PodDisruptionBudget"):
        for document in of_kind(documents, kind):
            spec = document["spec"]
            selector = spec["selector"] if kind == "Service" else spec["selector"]["matchLabels"]
            chosen = [w.name for w in pods if selects(selector, w.pod_labels)]
            if len(chosen) != 1:
                name = document["metadata"]["name"]
                problems.append(f"{kind} {name}: selects the pods of {chosen}, not of one workload")
    for hpa in of_kind(documents, "HorizontalPodAutoscaler"):
        target = hpa["spec"]["scaleTargetRef"]
        if named(documents, target["kind"], target["name"]) is None:
            problems.append(f"HPA {hpa['metadata']['name']}: no {target['kind']} {target['name']}")
    for statefulset in of_kind(documents, "StatefulSet"):
        service = named(documents, "Service", statefulset["spec"]["serviceName"])
        if service is None or service["spec"].get("clusterIP") != "None":
            problems.append(f"StatefulSet {statefulset['metadata']['name']}: no headless Service")
    return problems


def port_problems(documents: list[Document]) -> list[str]:
    """Probes and Services reach a declared container port, the one `--port` binds."""
    problems = []
    for each in workloads(documents):
        for container in each.containers():
            where = f"{each.name}/{container['name']}"
            bound = option(command_line(container), "--port")
            declared = {p["containerPort"] for p in container.get("ports", [])}
            if bound is not None and declared != {int(bound)}:
                problems.append(f"{where}: listens on {bound}, declares {sorted(declared)}")
            for kind, handler in probes(container):
                port = probe_port(handler)
                if port is not None and container_port(container, port) is None:
                    problems.append(f"{where}: {kind} reaches port {port}, not a container port")
    for service in of_kind(documents, "Service"):
        chosen = [
            w for w in workloads(documents) if selects(service["spec"]["selector"], w.pod_labels)
        ]
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            for each in chosen:
                if not any(container_port(c, target) for c in each.containers()):
                    name = service["metadata"]["name"]
                    problems.append(f"Service {name}: targetPort {target} is not on {each.name}")
    return problems


def gateway_config(documents: list[Document], directory: Path) -> GatewayConfig:
    """The ConfigMap's gateway YAML, read by the gateway's own loader."""
    name, key = GATEWAY_CONFIG
    config_map = named(documents, "ConfigMap", name)
    assert config_map is not None, f"no ConfigMap {name}"
    path = directory / key
    path.write_text(config_map["data"][key])
    return load_gateway_config(path)


def _read_config(documents: list[Document]) -> GatewayConfig:
    with tempfile.TemporaryDirectory() as directory:
        return gateway_config(documents, Path(directory))


def prestop_seconds(container: dict[str, Any]) -> int:
    """How long the preStop hook holds the pod before SIGTERM (`sleep N` or a sleep action)."""
    handler = container.get("lifecycle", {}).get("preStop", {})
    if "sleep" in handler:
        seconds: int = handler["sleep"]["seconds"]
        return seconds
    command = handler.get("exec", {}).get("command", [])
    match = re.fullmatch(r"sleep (\d+)", " ".join(command))
    return int(match.group(1)) if match else 0


def drain_problems(documents: list[Document]) -> list[str]:
    """The gateway's grace covers preStop, limits.drain_timeout_s and the recorder's write-out."""
    gateway = workload(documents, *GATEWAY)
    config = _read_config(documents)
    (container,) = gateway.pod["containers"]
    pre_stop = prestop_seconds(container)
    needed = pre_stop + config.limits.drain_timeout_s + STOP_WAIT_S
    grace = gateway.pod.get("terminationGracePeriodSeconds", 30)
    problems = []
    if pre_stop <= 0:
        problems.append("gateway: no preStop wait, so SIGTERM comes while endpoints still route")
    if grace <= needed:
        problems.append(
            f"gateway: terminationGracePeriodSeconds {grace} <= preStop {pre_stop} + "
            f"drain_timeout_s {config.limits.drain_timeout_s} + recorder {STOP_WAIT_S:.0f}"
        )
    return problems


def max_replicas(documents: list[Document], kind: str, name: str) -> int:
    """The most pods a workload may run: its replicas, or an HPA's maxReplicas over it."""
    document = named(documents, kind, name)
    assert document is not None, f"no {kind} {name}"
    counts = [document["spec"].get("replicas", 1)]
    for hpa in of_kind(documents, "HorizontalPodAutoscaler"):
        target = hpa["spec"]["scaleTargetRef"]
        if (target["kind"], target["name"]) == (kind, name):
            counts.append(hpa["spec"]["maxReplicas"])
    return max(counts)


def spool_problems(documents: list[Document]) -> list[str]:
    """The spool is on a volume claim, the config is mounted, limits live in Redis."""
    gateway = workload(documents, *GATEWAY)
    config = _read_config(documents)
    (container,) = gateway.pod["containers"]
    claims = {t["metadata"]["name"] for t in gateway.spec.get("volumeClaimTemplates", [])}
    mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
    problems = []
    if mounts.get(str(config.recording.spool_dir)) not in claims:
        problems.append(f"gateway: spool_dir {config.recording.spool_dir} is not on a claim")
    config_path = Path(option(command_line(container), "--config") or "")
    if str(config_path.parent) not in mounts:
        problems.append(f"gateway: --config {config_path} is not on a mounted volume")
    workers = int(option(command_line(container), "--workers") or 1)
    if (
        max_replicas(documents, *GATEWAY) * workers > 1
        and config.limits.rate_limits.store != "redis"
    ):
        problems.append("gateway: several processes but rate limits are not in Redis")
    return problems


def beat_problems(documents: list[Document]) -> list[str]:
    """Exactly one beat, and an upgrade stops the old one before starting the new."""
    beat = workload(documents, "Deployment", "plumbline-beat")
    problems = []
    if beat.spec.get("replicas", 1) != 1:
        problems.append(f"beat: {beat.spec.get('replicas')} replicas")
    if beat.spec.get("strategy", {}).get("type") != "Recreate":
        problems.append("beat: a rolling update runs two beats at once")
    return problems
