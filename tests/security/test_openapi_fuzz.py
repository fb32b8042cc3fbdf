"""Schemathesis over the gateway's own OpenAPI (read, eval, dashboard and admin API).

Every operation gets schema-valid and schema-violating inputs, once with a team key and once
with an admin key, against a real gateway process. No answer may be a 5xx, every error is
OpenAI-shaped, and a 2xx body must match the documented schema.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.security.stack import SecurityStack, security_stack
from tests.security.tally import Tally, examples

pytestmark = pytest.mark.xdist_group("security-openapi")
FUZZ = settings(
    max_examples=examples(25),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecurityStack]:
    with security_stack("postgres", tmp_path_factory.mktemp("openapi")) as running:
        yield running


@pytest.fixture(scope="module")
def tally() -> Iterator[Tally]:
    found = Tally()
    yield found
    found.write("openapi")
    print({t: found.tried(t) for t in found.statuses})


@pytest.fixture(scope="module")
def schema(stack: SecurityStack) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(f"{stack.url}/api/openapi.json")


def _operations(schema: schemathesis.BaseSchema) -> list[schemathesis.APIOperation]:
    found = [result.ok() for result in schema.get_all_operations()]
    assert len(found) >= 30
    return found


@pytest.mark.parametrize("who", ["alpha", "admin"])
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_answers_a_5xx_or_an_unshaped_error(
    stack: SecurityStack,
    schema: schemathesis.BaseSchema,
    tally: Tally,
    who: str,
    mode: GenerationMode,
) -> None:
    auth = {"Authorization": f"Bearer {stack.keys[who]}"}
    target = f"openapi ({who} key)"
    for operation in _operations(schema):

        @FUZZ
        @given(case=operation.as_strategy(generation_mode=mode))
        def one(case: schemathesis.Case) -> None:
            response = case.call(base_url=stack.url, headers=auth, timeout=60)
            as_httpx = httpx.Response(response.status_code, content=response.content)
            tally.check(target, as_httpx, f"{case.method} {case.formatted_path}")
            checks = [not_a_server_error]
            if mode is GenerationMode.POSITIVE and response.status_code < 300:
                checks.append(response_schema_conformance)
            case.validate_response(response, checks=checks)

        try:
            one()
        except Unsatisfiable:
            # An operation without parameters or body has no schema to violate.
            assert mode is GenerationMode.NEGATIVE, operation.label
    assert not tally.problems, tally.problems[:5]
    assert tally.tried(target) > 0
