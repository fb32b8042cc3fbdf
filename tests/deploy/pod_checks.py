"""Checks on what each pod runs: CLI commands and flags, environment, security, resources."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from typing import Any

from pydantic import BaseModel, ValidationError

from plumbline.settings import Settings
from tests.deploy.kubernetes_manifests import (
    MANIFEST_DIR,
    REPO,
    Document,
    command_line,
    kustomization,
    named,
    workloads,
)

PREFIX = "PLUMBLINE_"
_OTEL_NAME = re.compile(r"\bOTEL_[A-Z_]+[A-Z]\b")


@functools.cache
def cli_help(command: str) -> str | None:
    """`python -m apps.cli COMMAND --help`, or None when there is no such command."""
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "TERM": "dumb", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "apps.cli", command, "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    return result.stdout if result.returncode == 0 else None


def cli_problems(documents: list[Document]) -> list[str]:
    """Every container runs a real `plumbline` command with flags that command has."""
    problems = []
    for each in workloads(documents):
        for container in each.containers():
            where = f"{each.name}/{container['name']}"
            if "command" in container:
                problems.append(f"{where}: sets command, replacing the image's `plumbline`")
            args = command_line(container)
            if not args:
                problems.append(f"{where}: no plumbline command")
                continue
            text = cli_help(args[0])
            if text is None:
                problems.append(f"{where}: `plumbline {args[0]}` is not a command")
                continue
            for flag in (a.split("=", 1)[0] for a in args[1:] if a.startswith("--")):
                if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text):
                    problems.append(f"{where}: `plumbline {args[0]}` has no {flag}")
    return problems


def settings_path(name: str) -> list[str] | None:
    """The Settings field a PLUMBLINE_ variable sets (lower-case parts), or None if none."""
    parts = name.removeprefix(PREFIX).lower().split("__")
    model: type[BaseModel] = Settings
    for index, part in enumerate(parts):
        field = model.model_fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
            continue
        return parts if index == len(parts) - 1 else None
    return None


@functools.cache
def otel_names() -> frozenset[str]:
    """OTEL_* variables the project's code reads (named literally in its sources)."""
    names: set[str] = set()
    for package in ("plumbline", "gateway", "workers", "evals"):
        for path in (REPO / package).rglob("*.py"):
            names.update(_OTEL_NAME.findall(path.read_text()))
    return frozenset(names)


def _source_data(documents: list[Document], kind: str, name: str) -> dict[str, str] | None:
    source = named(documents, kind, name)
    if source is None:
        return None
    data: dict[str, str] = {**source.get("data", {}), **source.get("stringData", {})}
    return data


def container_environment(
    documents: list[Document], container: dict[str, Any]
) -> tuple[dict[str, str], list[str]]:
    """Variables a container gets (from env and envFrom) and references that resolve to nothing."""
    env: dict[str, str] = {}
    missing: list[str] = []
    for source in container.get("envFrom", []):
        for kind, ref in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if ref in source:
                data = _source_data(documents, kind, source[ref]["name"])
                if data is None:
                    missing.append(f"{kind} {source[ref]['name']}")
                env.update(data or {})
    for variable in container.get("env", []):
        value = variable.get("value", "")
        for kind, ref in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            key_ref = variable.get("valueFrom", {}).get(ref)
            if key_ref:
                data = _source_data(documents, kind, key_ref["name"]) or {}
                if key_ref["key"] not in data:
                    missing.append(f"{kind} {key_ref['name']} key {key_ref['key']}")
                value = data.get(key_ref["key"], "")
        env[variable["name"]] = value
    return env, missing


def env_problems(documents: list[Document]) -> list[str]:
    """Every variable is a real setting (or an OTEL_* the code reads) and parses as one."""
    problems = []
    for each in workloads(documents):
        for container in each.containers():
            where = f"{each.name}/{container['name']}"
            env, missing = container_environment(documents, container)
            problems.extend(f"{where}: refers to missing {m}" for m in missing)
            nested: dict[str, Any] = {}
            for name, value in env.items():
                path = settings_path(name) if name.startswith(PREFIX) else None
                if path is None:
                    if name not in otel_names():
                        problems.append(f"{where}: {name} is not a setting Plumbline reads")
                    continue
                group = nested
                for part in path[:-1]:
                    group = group.setdefault(part, {})
                group[path[-1]] = value
            try:
                Settings.model_validate(nested)
            except ValidationError as error:
                problems.append(f"{where}: settings do not parse: {error}")
    return problems


def _mounted_at(container: dict[str, Any], path: str) -> str | None:
    for mount in container.get("volumeMounts", []):
        if mount["mountPath"] == path and not mount.get("readOnly", False):
            name: str = mount["name"]
            return name
    return None


def security_problems(documents: list[Document]) -> list[str]:
    """Non-root, read-only root with a writable /tmp, no escalation, bounded resources."""
    images = {image["name"] for image in kustomization().get("images", [])}
    problems = []
    for each in workloads(documents):
        pod_context = each.pod.get("securityContext", {})
        volumes = {v["name"]: v for v in each.pod.get("volumes", [])}
        for container in each.containers():
            where = f"{each.name}/{container['name']}"
            context = {**pod_context, **container.get("securityContext", {})}
            if context.get("runAsNonRoot") is not True or not context.get("runAsUser"):
                problems.append(f"{where}: not a numeric non-root user")
            if context.get("readOnlyRootFilesystem") is not True:
                problems.append(f"{where}: writable root filesystem")
            if context.get("allowPrivilegeEscalation") is not False:
                problems.append(f"{where}: may escalate privileges")
            tmp = _mounted_at(container, "/tmp")
            if tmp is None or "emptyDir" not in volumes.get(tmp, {}):
                problems.append(f"{where}: no writable emptyDir at /tmp")
            resources = container.get("resources", {})
            for bound in ("requests", "limits"):
                if not {"cpu", "memory"} <= set(resources.get(bound, {})):
                    problems.append(f"{where}: no cpu and memory {bound}")
            if container["image"].split(":")[0] not in images:
                problems.append(f"{where}: image {container['image']} is not set by kustomization")
    return problems


def kustomization_problems(listed: set[str], present: set[str]) -> list[str]:
    """The kustomization lists every manifest file here, and only files that exist."""
    return [f"{name}: not in kustomization.yaml" for name in sorted(present - listed)] + [
        f"{name}: listed but missing" for name in sorted(listed - present)
    ]


def manifest_files() -> set[str]:
    """The YAML files in deploy/kubernetes other than the kustomization."""
    return {p.name for p in MANIFEST_DIR.glob("*.yaml")} - {"kustomization.yaml"}
