"""Pattern, number and upper-bound checks: hostile patterns are refused at load or run in linear
time, and the new check kinds are validated with the field named."""

from __future__ import annotations

import time
from typing import Any

import pytest

from coworkenv.patterns import MAX_PATTERN, pattern_problem, pattern_search
from coworkenv.spec import SpecError
from minispec import tiny_spec


def _matches(**fields: Any) -> dict[str, Any]:
    return {"id": "p", "kind": "field_matches", "service": "expenses", "collection": "expenses", **fields}


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(a)\1", "no backreferences or lookaround"),
        (r"foo(?=bar)", "no backreferences or lookaround"),
        (r"a{1001}", "invalid repetition size"),
        ("(", "missing )"),
        (".*", "matches empty text"),
        ("x?", "matches empty text"),
        ("a" * (MAX_PATTERN + 1), "longer than"),
    ],
)
def test_a_pattern_that_cannot_be_used_is_refused_with_the_reason(pattern: str, reason: str) -> None:
    assert reason in (pattern_problem(pattern) or "")
    with pytest.raises(SpecError) as err:
        tiny_spec(checks=[_matches(field="description", pattern=pattern)])
    assert "checks[0].field_matches.pattern: Value error," in str(err.value) and reason in str(err.value)


def test_catastrophic_patterns_run_in_linear_time() -> None:
    """``(a+)+$`` takes Python's ``re`` minutes on 30 letters and a '!'; RE2 does 50,000 in milliseconds."""
    text = "a" * 50_000 + "!"
    start = time.perf_counter()
    for pattern in (r"(a+)+$", r"(a|aa)+$", r"(a*)*b", r"(.*a){20}x"):
        assert pattern_problem(pattern) is None
        assert pattern_search(pattern, text) is False
    assert time.perf_counter() - start < 5  # a bound on a hang, not a benchmark (benchmarks/ measures speed)


def test_a_huge_text_is_searched_only_in_its_bounded_prefix() -> None:
    assert pattern_search("needle", "x" * 200_000 + "needle") is False
    assert pattern_search("needle", "needle" + "x" * 200_000) is True


def test_search_is_case_insensitive_and_reads_lists_item_by_item() -> None:
    assert pattern_search(r"^sam\.ortiz@corp\.com$", ["kim@corp.com", "Sam.Ortiz@corp.com"])
    assert not pattern_search(r"^sam", ["kim sam"])
    assert not pattern_search("x", None)
    assert pattern_search(r"^38\.5$", 38.5)


@pytest.mark.parametrize(
    ("check", "message"),
    [
        ({"kind": "max_calls", "tool": "mail_send", "max": -1}, "checks[0].max_calls.max: Input should be greater"),
        ({"kind": "max_calls", "tool": "mail_send"}, "checks[0].max_calls.max: Field required"),
        (
            {
                "kind": "field_number",
                "service": "expenses",
                "collection": "expenses",
                "field": "amount",
                "value": "nan",
            },
            "checks[0].field_number.value: Input should be a finite number",
        ),
        (
            {"kind": "answer_contains", "values": [[]]},
            "answer_contains.values: Value error, item 0: an any-of group needs at least one alternative",
        ),
        (
            {"kind": "answer_contains", "values": [["a", 3]]},
            "checks[0].answer_contains.values[0].list[str][1]: Input should be a valid string",
        ),
    ],
)
def test_a_malformed_check_names_the_field(check: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as err:
        tiny_spec(checks=[{"id": "c", **check}])
    assert message in str(err.value)
