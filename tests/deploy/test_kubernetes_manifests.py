"""deploy/kubernetes: valid against the Kubernetes schemas (offline), consistent with Plumbline."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.deploy import kubernetes_checks as checks
from tests.deploy import pod_checks
from tests.deploy.kubernetes_manifests import Document, kustomization, load_documents
from tests.deploy.manifest_mutations import MUTATIONS, Mutation

Check = Callable[[list[Document]], list[str]]
CHECKS: dict[str, Check] = {
    "schema": checks.schema_problems,
    "selectors": checks.selector_problems,
    "ports": checks.port_problems,
    "drain": checks.drain_problems,
    "spool": checks.spool_problems,
    "beat": checks.beat_problems,
    "cli": pod_checks.cli_problems,
    "env": pod_checks.env_problems,
    "security": pod_checks.security_problems,
}
EXPECTED_KINDS = {
    "ConfigMap",
    "Secret",
    "Job",
    "StatefulSet",
    "Service",
    "PodDisruptionBudget",
    "HorizontalPodAutoscaler",
    "Deployment",
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_manifests_pass(name: str) -> None:
    assert CHECKS[name](load_documents()) == []


def test_kustomization_lists_every_manifest() -> None:
    listed = set(kustomization()["resources"])
    assert pod_checks.kustomization_problems(listed, pod_checks.manifest_files()) == []
    unlisted = pod_checks.kustomization_problems(
        listed - {"secret.yaml"}, pod_checks.manifest_files()
    )
    assert unlisted == ["secret.yaml: not in kustomization.yaml"]
    extra = pod_checks.kustomization_problems(
        listed | {"ingress.yaml"}, pod_checks.manifest_files()
    )
    assert extra == ["ingress.yaml: listed but missing"]


def test_every_part_of_the_deployment_is_there() -> None:
    documents = load_documents()
    assert {d["kind"] for d in documents} == EXPECTED_KINDS
    assert all("namespace" not in d["metadata"] for d in documents)


def test_configmap_gateway_yaml_loads_with_the_gateway_loader(tmp_path: Path) -> None:
    config = checks.gateway_config(load_documents(), tmp_path)
    assert config.limits.rate_limits.store == "redis"
    assert [m.name for m in config.models] == ["llama-3.1-8b"]


@pytest.mark.parametrize(
    ("check", "mutation", "expected"),
    [
        pytest.param(check, mutate, expected, id=f"{check}-{label}")
        for check, label, mutate, expected in MUTATIONS
    ],
)
def test_a_broken_manifest_is_caught(check: str, mutation: Mutation, expected: str) -> None:
    documents = copy.deepcopy(load_documents())
    mutation(documents)
    problems = CHECKS[check](documents)
    assert any(expected in problem for problem in problems), problems


def test_every_check_has_a_broken_manifest_it_catches() -> None:
    assert {check for check, *_ in MUTATIONS} == set(CHECKS)
