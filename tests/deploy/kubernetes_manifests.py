"""deploy/kubernetes as the cluster would receive it: documents, pods, containers, ports."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
MANIFEST_DIR = REPO / "deploy" / "kubernetes"
KUSTOMIZATION = MANIFEST_DIR / "kustomization.yaml"
# The oldest Kubernetes the manifests are written for (every field they use is GA there).
KUBERNETES_VERSION = "1.33"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "Job")

Document = dict[str, Any]


@dataclass(frozen=True)
class Workload:
    """A Deployment, StatefulSet or Job and the pod it runs."""

    kind: str
    name: str
    spec: dict[str, Any]

    @property
    def pod(self) -> dict[str, Any]:
        """The pod template's spec."""
        pod: dict[str, Any] = self.spec["template"]["spec"]
        return pod

    @property
    def pod_labels(self) -> dict[str, str]:
        """Labels every pod of this workload carries."""
        labels: dict[str, str] = self.spec["template"]["metadata"].get("labels", {})
        return labels

    def containers(self) -> list[dict[str, Any]]:
        """Init containers and containers."""
        return [*self.pod.get("initContainers", []), *self.pod["containers"]]


def kustomization() -> Document:
    """deploy/kubernetes/kustomization.yaml."""
    document: Document = yaml.safe_load(KUSTOMIZATION.read_text())
    return document


def load_documents() -> list[Document]:
    """Every resource the kustomization lists, in its order."""
    documents: list[Document] = []
    for name in kustomization()["resources"]:
        text = (MANIFEST_DIR / name).read_text()
        documents.extend(d for d in yaml.safe_load_all(text) if d is not None)
    return documents


def of_kind(documents: list[Document], kind: str) -> list[Document]:
    """The documents of one kind."""
    return [d for d in documents if d["kind"] == kind]


def named(documents: list[Document], kind: str, name: str) -> Document | None:
    """The document of that kind and name, if there is one."""
    for document in of_kind(documents, kind):
        if document["metadata"]["name"] == name:
            return document
    return None


def workloads(documents: list[Document]) -> list[Workload]:
    """Everything that runs pods."""
    return [
        Workload(d["kind"], d["metadata"]["name"], d["spec"])
        for d in documents
        if d["kind"] in WORKLOAD_KINDS
    ]


def workload(documents: list[Document], kind: str, name: str) -> Workload:
    """One workload, by kind and name."""
    document = named(documents, kind, name)
    assert document is not None, f"no {kind} {name}"
    return Workload(kind, name, document["spec"])


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Whether a label selector (matchLabels) picks pods with these labels."""
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def probes(container: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, handler) of each probe and lifecycle hook that opens a port."""
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container.get(kind)
        if probe:
            yield kind, probe
    yield from container.get("lifecycle", {}).items()


def probe_port(handler: dict[str, Any]) -> int | str | None:
    """The port an httpGet/tcpSocket/grpc handler reaches; None for exec or sleep."""
    for action in ("httpGet", "tcpSocket", "grpc"):
        if action in handler:
            port: int | str = handler[action]["port"]
            return port
    return None


def container_port(container: dict[str, Any], port: int | str) -> int | None:
    """The containerPort a named or numbered port refers to, if the container declares it."""
    for declared in container.get("ports", []):
        if port in (declared["containerPort"], declared.get("name")):
            number: int = declared["containerPort"]
            return number
    return None


def option(args: list[str], flag: str) -> str | None:
    """The value after `flag` (or in `flag=value`) in a container's arguments."""
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(f"{flag}="):
            return arg.split("=", 1)[1]
    return None


def command_line(container: dict[str, Any]) -> list[str]:
    """What the image's `plumbline` entrypoint is given: the container's args."""
    args: list[str] = container.get("args", [])
    return args
