"""The compiled record predicates (:mod:`coworkenv.expr_fast`) against the reference evaluator.

Each direct form is tried on the values that could make it differ (``1`` against ``True``
and ``1.0``, None and missing fields, lists where text is expected, unhashable members,
non-dict records, failures after a short-circuit), and random expressions over random
records must get the verdict the reference gives, or fail the same way.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coworkenv.expr_fast import matches_reference, record_predicate

RECORDS: list[Any] = [
    {},
    {"id": "x", "folder": "sent", "subject": "Quarterly numbers", "n": 1, "to": ["a@b.io"]},
    {"id": 1, "folder": None, "subject": ["Quarterly"], "n": True, "to": "a@b.io"},
    {"id": 1.0, "folder": 1, "subject": None, "n": 1.0, "to": None, "a": {"b": {"c": 2}}},
    {"folder": ["sent"], "subject": {"k": "Quarterly"}, "n": "1", "to": [["x"]], "a": [1, 2]},
    {"folder": "SENT", "subject": "quarterly", "n": 10**40, "a": {"b": None}},
    {"folder": {"x": 1}, "n": -0.0, "a": "text", "to": []},
]

DIRECT_FORMS = [
    # r.field == / != literal
    "r.folder == 'sent'",
    "r.n == 1",
    "r.n == 1.0",
    "r.n == true",
    "r.folder != 'sent'",
    "r.folder == null",
    "r.missing == null",
    # ordering against a literal (type mismatches are false, not errors)
    "r.n > 0",
    "r.n <= 1",
    "r.folder < 'z'",
    "r.id >= 1",
    # membership in a list of literals (unhashable values, None, mixed types)
    "r.folder in ['sent', 'inbox']",
    "r.n in [1, 'x']",
    "r.n not in [1.0, 2]",
    "r.subject in ['Quarterly', null]",
    "r.to in [['x'], 'a@b.io']",
    "r.folder in []",
    "r.folder not in []",
    # contains(r.field, 'text'): text, lists, dicts, None, numbers
    "contains(r.subject, 'Quarterly')",
    "contains(r.subject, 'QUARTERLY')",
    "contains(r.to, 'a@b.io')",
    "contains(r.n, '1')",
    "contains(r.missing, 'x')",
    "contains(r.folder, '')",
    # nested keys through dicts, lists, text and None
    "r.a.b.c == 2",
    "r.a.b == null",
    "r.a.b.c.d",
    # and / or, short-circuits before a failing part, and failing parts
    "r.folder == 'sent' and contains(r.subject, 'Quarterly')",
    "r.folder == 'x' and r.to[*].y == 1",
    "r.folder == 'sent' or r.to[*].y == 1",
    "r.n == 1 and r.folder == 'sent' and r.id == 'x'",
    "r.n == 2 or r.folder == 'sent' or r.id == 'x'",
    "r.to[*] and r.n",
    "not (r.folder == 'sent' or r.n > 5)",
    # names other than the record, the record whole
    "args.x == null",
    "r == null",
    "len(r) > 2",
    # arithmetic and functions through the reference forms
    "r.n + 1 > 1",
    "r.n * 'ab' == 'abab'",
    "lower(r.folder) == 'sent'",
    "str(r.n) == '1'",
    "r.id % 2 == 1",
]


@pytest.mark.parametrize("src", DIRECT_FORMS)
def test_each_direct_form_gives_the_reference_verdict(src: str) -> None:
    fast = record_predicate(src)
    for rec in RECORDS:
        assert fast(rec) is matches_reference(src, rec), (src, rec)


def test_malformed_expressions_match_nothing() -> None:
    for src in ("r.folder ==", "unknown_fn(r.x)", "'open", "r." + "(" * 50, "x" * 5000):
        assert all(record_predicate(src)(rec) is False for rec in RECORDS), src
        assert all(matches_reference(src, rec) is False for rec in RECORDS), src


def test_records_that_are_not_dicts_are_read_as_the_reference_reads_them() -> None:
    for src in ("r.folder == 'sent'", "r == 3", "len(r) == 2", "contains(r.a, 'x')", "r.a.b == null"):
        for rec in (None, 3, "text", ["a", "b"], [{"folder": "sent"}]):
            assert record_predicate(src)(rec) is matches_reference(src, rec), (src, rec)


def test_a_value_nested_too_deeply_is_a_failed_match() -> None:
    deep: Any = "x"
    for _ in range(100_000):
        deep = [deep]
    rec = {"folder": deep}
    assert record_predicate("r.folder == [1]")(rec) is matches_reference("r.folder == [1]", rec) is False


def test_a_huge_integer_fails_the_same_way() -> None:
    rec = {"n": 10**5000}
    for src in ("r.n in 'abc'", "contains(r.n, '1')", "str(r.n) == '1'"):
        outcomes = []
        for judge in (record_predicate(src), lambda r, s=src: matches_reference(s, r)):
            try:
                outcomes.append(judge(rec))
            except ValueError as exc:
                outcomes.append(type(exc))
        assert outcomes[0] == outcomes[1], src


def test_the_predicate_of_an_expression_is_made_once() -> None:
    assert record_predicate("r.folder == 'sent'") is record_predicate("r.folder == 'sent'")


# --- random expressions over random records ---------------------------------------------------------------

FIELDS = ["folder", "subject", "n", "a", "missing"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, -2.5, 10**20]),
    st.sampled_from(["", "sent", "SENT", "Quarterly report", "a@b.io", "1", "x"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3),
    max_leaves=6,
)
RECORD = st.dictionaries(st.sampled_from(FIELDS), VALUES, min_size=2, max_size=5)


def _literal(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    return str(value)


LITERAL = SCALARS.filter(lambda v: not (isinstance(v, int | float) and not isinstance(v, bool) and v < 0)).map(_literal)
KEY = st.sampled_from(FIELDS)
FIELD = KEY.map(lambda k: f"r.{k}") | st.lists(KEY, min_size=2, max_size=3).map(lambda keys: "r." + ".".join(keys))
OPERAND = st.one_of(
    FIELD,
    LITERAL,
    st.lists(LITERAL, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    FIELD.map(lambda f: f + "[0]"),
    FIELD.map(lambda f: f + "[*].id"),
    FIELD.map(lambda f: f"len({f})"),
    FIELD.map(lambda f: f"lower({f})"),
    FIELD.map(lambda f: f + " + 1"),
    st.sampled_from(["r", "args", "null"]),
)
COMPARISON = st.builds(
    lambda a, op, b: f"{a} {op} {b}",
    OPERAND,
    st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in"]),
    OPERAND,
)
CALL = st.builds(
    lambda fn, a, b: f"{fn}({a}, {b})", st.sampled_from(["contains", "startswith", "endswith"]), OPERAND, OPERAND
)
# the shapes with a direct form, drawn often: a field against a literal, a list of literals, a text
DIRECT = st.one_of(
    st.builds(lambda f, op, v: f"{f} {op} {v}", FIELD, st.sampled_from(["==", "!=", "<", ">=", "in"]), LITERAL),
    st.builds(
        lambda f, op, xs: f"{f} {op} [{', '.join(xs)}]",
        FIELD,
        st.sampled_from(["in", "not in"]),
        st.lists(LITERAL, max_size=3),
    ),
    st.builds(lambda f, v: f"contains({f}, {v})", FIELD, LITERAL),
)
EXPRESSION = st.recursive(
    st.one_of(DIRECT, COMPARISON, CALL, FIELD, OPERAND),
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"{a} and {b}", inner, inner),
        st.builds(lambda a, b: f"({a}) or ({b})", inner, inner),
        st.builds(lambda a, b, c: f"{a} and {b} and {c}", inner, inner, inner),
        st.builds(lambda a, b, c: f"{a} or {b} or {c}", inner, inner, inner),
        inner.map(lambda a: f"not ({a})"),
    ),
    max_leaves=5,
)


def _outcome(judge: Any, rec: Any) -> Any:
    try:
        return judge(rec)
    except Exception as exc:
        return type(exc)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(src=EXPRESSION, records=st.lists(RECORD, min_size=1, max_size=4))
def test_random_expressions_get_the_reference_verdict(src: str, records: list[dict[str, Any]]) -> None:
    fast = record_predicate(src)
    for rec in records:
        assert _outcome(fast, rec) == _outcome(lambda r: matches_reference(src, r), rec), (src, rec)
