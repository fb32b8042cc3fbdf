"""scripts/vllm-server discards a compile cache that a killed vLLM left with a cut-short .so."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import orjson

ROOT = Path(__file__).resolve().parents[2]


def _launcher() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("vllm_server", str(ROOT / "scripts/vllm-server"))
    spec = importlib.util.spec_from_loader("vllm_server", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _shared_object() -> Path:
    """A real ELF shared object to copy (orjson's extension module)."""
    return next(Path(orjson.__file__).parent.glob("*.so"))


def test_a_complete_cache_is_kept(tmp_path: Path) -> None:
    launcher = _launcher()
    graphs = tmp_path / "torch_compile_cache" / "inductor_cache" / "fa"
    graphs.mkdir(parents=True)
    shutil.copy(_shared_object(), graphs / "graph.main.so")
    assert launcher.discard_damaged_compile_cache(tmp_path) is False
    assert (graphs / "graph.main.so").exists()


def test_a_cache_with_a_truncated_object_is_discarded(tmp_path: Path) -> None:
    launcher = _launcher()
    graphs = tmp_path / "torch_compile_cache" / "inductor_cache" / "fa"
    graphs.mkdir(parents=True)
    shutil.copy(_shared_object(), graphs / "whole.main.so")
    data = _shared_object().read_bytes()
    (graphs / "cut.main.so").write_bytes(data[: len(data) // 3])
    assert launcher.discard_damaged_compile_cache(tmp_path) is True
    assert not (tmp_path / "torch_compile_cache").exists()
    assert list(tmp_path.iterdir()) == []


def test_no_cache_yet_is_nothing_to_do(tmp_path: Path) -> None:
    assert _launcher().discard_damaged_compile_cache(tmp_path) is False
