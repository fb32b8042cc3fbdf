"""Which vLLM runner a backend serves, told by the routes it registered.

vLLM registers its routes by the runner's tasks: a generate server has `/v1/completions` and no
`/pooling`, a pooling server the other way round, and a route not registered is a plain 404. A
GET to a POST route that exists is a 405 before any handler, validation or engine work runs,
so one or two bodiless GETs tell the runner, on vLLM and on the simulator alike.
"""

from __future__ import annotations

import aiohttp

# The first route of each runner that answers 405 names it; a classify-only model has no
# `/pooling` in some builds, so its other routes are asked too.
RUNNER_ROUTES = (
    ("generate", "/v1/completions"),
    ("pooling", "/pooling"),
    ("pooling", "/v1/embeddings"),
    ("pooling", "/classify"),
)


async def served_runner(
    http: aiohttp.ClientSession,
    url: str,
    headers: dict[str, str],
    timeout: aiohttp.ClientTimeout,
) -> str | None:
    """The runner the server at `url` serves, or None when no route tells (not a vLLM?)."""
    for runner, path in RUNNER_ROUTES:
        async with http.get(f"{url}{path}", timeout=timeout, headers=headers) as response:
            if response.status == 405:
                return runner
    return None


def runner_mismatch(expected: str, seen: str | None) -> str | None:
    """Why a backend serving `seen` cannot serve a model configured for `expected`, or None."""
    if seen is None or seen == expected:
        return None
    return (
        f"it serves vLLM's {seen} runner, but the model's config says `runner: {expected}` "
        f"(start it with `--runner {expected}`, or change the config)"
    )
