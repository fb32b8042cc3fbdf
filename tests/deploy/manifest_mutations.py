"""Broken copies of deploy/kubernetes, each with the problem a check must report."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.deploy.kubernetes_manifests import Document, named, of_kind


def _container(documents: list[Document], kind: str, name: str) -> dict[str, Any]:
    document = named(documents, kind, name)
    assert document is not None
    container: dict[str, Any] = document["spec"]["template"]["spec"]["containers"][0]
    return container


def _gateway(documents: list[Document]) -> dict[str, Any]:
    return _container(documents, "StatefulSet", "plumbline-gateway")


def _pod(documents: list[Document], kind: str, name: str) -> dict[str, Any]:
    document = named(documents, kind, name)
    assert document is not None
    pod: dict[str, Any] = document["spec"]["template"]["spec"]
    return pod


def _gateway_yaml(documents: list[Document], old: str, new: str) -> None:
    config_map = named(documents, "ConfigMap", "plumbline-gateway-config")
    assert config_map is not None and old in config_map["data"]["gateway.yaml"]
    config_map["data"]["gateway.yaml"] = config_map["data"]["gateway.yaml"].replace(old, new)


def _args(documents: list[Document], kind: str, name: str, old: str, new: str) -> None:
    container = _container(documents, kind, name)
    assert old in container["args"]
    container["args"] = [new if a == old else a for a in container["args"]]


def _memory_limits_one_worker(documents: list[Document]) -> None:
    # One worker per pod, but the HPA may run ten pods.
    _gateway_yaml(documents, "store: redis", "store: memory")
    _args(documents, "StatefulSet", "plumbline-gateway", "2", "1")


Mutation = Callable[[list[Document]], None]
MUTATIONS: list[tuple[str, str, Mutation, str]] = [
    ("schema", "unknown field", lambda d: _gateway(d).update(readinesProbe={}), "unexpected"),
    (
        "schema",
        "wrong type",
        lambda d: named(d, "Deployment", "plumbline-beat")["spec"].update(replicas="one"),
        "not of type",
    ),
    (
        "selectors",
        "workload selector",
        lambda d: named(d, "Deployment", "plumbline-worker")["spec"]["selector"][
            "matchLabels"
        ].update({"app.kubernetes.io/component": "workers"}),
        "does not match its pod labels",
    ),
    (
        "selectors",
        "service selector",
        lambda d: of_kind(d, "Service")[0]["spec"]["selector"].update(
            {"app.kubernetes.io/component": "gatway"}
        ),
        "not of one workload",
    ),
    (
        "selectors",
        "pdb selector",
        lambda d: of_kind(d, "PodDisruptionBudget")[0]["spec"]["selector"]["matchLabels"].pop(
            "app.kubernetes.io/component"
        ),
        "not of one workload",
    ),
    (
        "selectors",
        "hpa target",
        lambda d: of_kind(d, "HorizontalPodAutoscaler")[0]["spec"]["scaleTargetRef"].update(
            kind="Deployment"
        ),
        "no Deployment plumbline-gateway",
    ),
    (
        "ports",
        "probe port",
        lambda d: _gateway(d)["readinessProbe"]["httpGet"].update(port=9090),
        "not a container port",
    ),
    (
        "ports",
        "named probe port",
        lambda d: _gateway(d)["livenessProbe"]["httpGet"].update(port="metrics"),
        "not a container port",
    ),
    (
        "ports",
        "bound port",
        lambda d: _args(d, "StatefulSet", "plumbline-gateway", "8080", "8000"),
        "listens on 8000",
    ),
    (
        "ports",
        "service target",
        lambda d: of_kind(d, "Service")[0]["spec"]["ports"][0].update(targetPort="web"),
        "targetPort web",
    ),
    (
        "drain",
        "short grace",
        lambda d: _pod(d, "StatefulSet", "plumbline-gateway").update(
            terminationGracePeriodSeconds=100
        ),
        "terminationGracePeriodSeconds 100",
    ),
    (
        "drain",
        "longer drain",
        lambda d: _gateway_yaml(d, "drain_timeout_s: 30", "drain_timeout_s: 45"),
        "drain_timeout_s 45",
    ),
    ("drain", "no preStop", lambda d: _gateway(d).pop("lifecycle"), "no preStop"),
    (
        "spool",
        "spool not on claim",
        lambda d: _gateway_yaml(d, "spool_dir: /var/lib/plumbline/spool", "spool_dir: /tmp/spool"),
        "not on a claim",
    ),
    (
        "spool",
        "memory limits",
        lambda d: _gateway_yaml(d, "store: redis", "store: memory"),
        "not in Redis",
    ),
    (
        "spool",
        "memory limits, one worker, autoscaled",
        _memory_limits_one_worker,
        "not in Redis",
    ),
    (
        "spool",
        "config not mounted",
        lambda d: _args(
            d,
            "StatefulSet",
            "plumbline-gateway",
            "/etc/plumbline/gateway.yaml",
            "/srv/gateway.yaml",
        ),
        "is not on a mounted volume",
    ),
    (
        "beat",
        "two beats",
        lambda d: named(d, "Deployment", "plumbline-beat")["spec"].update(replicas=2),
        "2 replicas",
    ),
    (
        "beat",
        "rolling beat",
        lambda d: named(d, "Deployment", "plumbline-beat")["spec"].pop("strategy"),
        "two beats at once",
    ),
    (
        "cli",
        "unknown command",
        lambda d: _args(d, "Deployment", "plumbline-beat", "beat", "beats"),
        "is not a command",
    ),
    (
        "cli",
        "unknown flag",
        lambda d: _args(d, "Deployment", "plumbline-worker", "--concurrency", "--threads"),
        "has no --threads",
    ),
    (
        "cli",
        "entrypoint replaced",
        lambda d: _container(d, "Job", "plumbline-migrate").update(command=["alembic"]),
        "sets command",
    ),
    (
        "env",
        "unknown setting",
        lambda d: named(d, "ConfigMap", "plumbline-env")["data"].update(
            PLUMBLINE_REDIS_URL="redis://redis:6379/0"
        ),
        "PLUMBLINE_REDIS_URL is not a setting",
    ),
    (
        "env",
        "unknown otel",
        lambda d: _gateway(d)["env"].append({"name": "OTEL_SERVICE", "value": "x"}),
        "OTEL_SERVICE is not a setting",
    ),
    (
        "env",
        "bad value",
        lambda d: _gateway(d)["env"].append(
            {"name": "PLUMBLINE_WORKER__BATCH_SIZE", "value": "many"}
        ),
        "do not parse",
    ),
    (
        "env",
        "missing secret",
        lambda d: named(d, "Secret", "plumbline-secrets")["metadata"].update(
            name="plumbline-secret"
        ),
        "missing Secret plumbline-secrets",
    ),
    (
        "security",
        "root",
        lambda d: _pod(d, "Deployment", "plumbline-worker")["securityContext"].pop("runAsUser"),
        "not a numeric non-root user",
    ),
    (
        "security",
        "writable root",
        lambda d: _container(d, "Job", "plumbline-migrate")["securityContext"].update(
            readOnlyRootFilesystem=False
        ),
        "writable root filesystem",
    ),
    (
        "security",
        "no tmp",
        lambda d: _container(d, "Deployment", "plumbline-beat").pop("volumeMounts"),
        "no writable emptyDir at /tmp",
    ),
    (
        "security",
        "no limits",
        lambda d: _gateway(d)["resources"].pop("limits"),
        "no cpu and memory limits",
    ),
    (
        "security",
        "unmanaged image",
        lambda d: _gateway(d).update(image="nginx"),
        "is not set by kustomization",
    ),
]
