"""ModelAccess: patterns checked and bounded, lists intersected, matched once per configuration."""

from __future__ import annotations

import pytest

from gateway.governance.model_access import (
    MAX_PATTERN_CHARS,
    MAX_PATTERNS,
    ModelAccess,
    check_patterns,
    stored_patterns,
)

CONFIGURED = ("llama-8b", "llama-8b-instruct", "llama-70b", "qwen-7b", "org/mistral-7b")


def test_no_list_allows_every_configured_model() -> None:
    access = ModelAccess()
    assert not access.restricted
    assert access.visible(CONFIGURED) == list(CONFIGURED)
    assert access.permits("qwen-7b", CONFIGURED)
    # A restricted key is never allowed a model that is not configured, pattern or not.
    assert not ModelAccess(team=("*",)).permits("gpt-4", CONFIGURED)


def test_team_and_key_lists_intersect() -> None:
    access = ModelAccess(team=("llama-*", "qwen-7b"), key=("*-8b*", "qwen-7b", "org/*"))
    assert access.visible(CONFIGURED) == ["llama-8b", "llama-8b-instruct", "qwen-7b"]
    assert not access.permits("llama-70b", CONFIGURED)  # the key's list leaves it out
    assert not access.permits("org/mistral-7b", CONFIGURED)  # the team's list leaves it out
    disjoint = ModelAccess(team=("qwen-*",), key=("llama-*",))
    assert disjoint.visible(CONFIGURED) == []


def test_matching_is_exact_and_case_sensitive() -> None:
    access = ModelAccess(team=("llama-8b",))
    for name in ("LLAMA-8B", "llama-8b ", " llama-8b", "llama-8b/", "llama-8", "llama-8b\n"):
        assert not access.permits(name, (*CONFIGURED, name))
    # A glob in the request is a name like any other, never a pattern.
    assert not ModelAccess(team=("qwen-7b",)).permits("*", (*CONFIGURED, "*"))


def test_the_allowed_set_is_computed_once_per_configuration() -> None:
    access = ModelAccess(team=("llama-*",))
    first = access.allowed(CONFIGURED)
    assert access.allowed(CONFIGURED) is first
    other = (*CONFIGURED, "llama-405b")
    assert "llama-405b" in access.allowed(other)
    assert access.allowed(other) is access.allowed(other)


def test_equal_access_compares_equal_whatever_was_memoised() -> None:
    a, b = ModelAccess(team=("x*",)), ModelAccess(team=("x*",))
    a.allowed(CONFIGURED)
    assert a == b and hash(a) == hash(b)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("llama-8b", "is a list"),
        ({"a": 1}, "is a list"),
        (["x"] * (MAX_PATTERNS + 1), f"at most {MAX_PATTERNS}"),
        (["x" * (MAX_PATTERN_CHARS + 1)], f"at most {MAX_PATTERN_CHARS} characters"),
        ([""], "non-empty string"),
        ([3], "non-empty string"),
        ([None], "non-empty string"),
        (["llama 8b"], "no spaces"),
        (["llama-8b\n"], "no spaces"),
        (["llama\x00"], "no spaces"),
        (["\u200bllama"], "no spaces"),
    ],
)
def test_bad_lists_are_refused_saying_why(value: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        check_patterns(value)


def test_lists_are_stored_deduplicated_and_empty_means_every_model() -> None:
    assert check_patterns(None) is None
    assert check_patterns([]) is None
    assert check_patterns(["b*", "a", "b*"]) == ["b*", "a"]
    assert check_patterns(["x" * MAX_PATTERN_CHARS] * MAX_PATTERNS) == ["x" * MAX_PATTERN_CHARS]


def test_a_malformed_stored_value_allows_no_model() -> None:
    assert stored_patterns(None) is None
    assert stored_patterns(["a*"]) == ("a*",)
    for corrupt in ("llama-*", {"x": 1}, [1, 2], ["a b"]):
        assert stored_patterns(corrupt) == ()
        assert ModelAccess(team=stored_patterns(corrupt)).visible(CONFIGURED) == []
