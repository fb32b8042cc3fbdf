"""At run time, importing the proxy loads no ORM models, numpy, pandas, evals or web API."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("plumbline.models", "numpy", "pandas", "evals", "gateway.api", "gateway.usage")
# Imports every proxy module in a fresh interpreter and prints what the forbidden roots loaded.
PROBE = """
import importlib, pkgutil, sys
import gateway.proxy, gateway.upstream
for package in (gateway.proxy, gateway.upstream):
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
roots = tuple(sys.argv[1:])
print(sorted(m for m in sys.modules if m in roots or m.startswith(tuple(r + "." for r in roots))))
"""


def test_the_proxy_loads_none_of_the_forbidden_modules() -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *FORBIDDEN], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
