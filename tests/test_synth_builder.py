"""The synthesis builder: expressions quote their own literals, steps are found by role, checks by kind."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from coworkenv.agents import OracleTeacher
from coworkenv.bank.repair import synthesize
from coworkenv.expr import check_syntax, evaluate
from coworkenv.grading import PASS_THRESHOLD
from coworkenv.runtime import Environment
from coworkenv.spec.checks import RecordExists
from coworkenv.synth.blueprints import meeting_scheduling
from coworkenv.synth.checks import Checks
from coworkenv.synth.composer import Recipe
from coworkenv.synth.expr_builder import and_, arg, field, fn, literal, not_, or_, path, template
from coworkenv.synth.reference import Reference, uses
from coworkenv.verify.admission import play
from coworkenv.verify.probes import PROBES

AWKWARD = ("O'Brien", 'say "hi"', "back\\slash", "it's \\'quoted\\'")


@pytest.mark.parametrize("value", AWKWARD)
def test_literals_with_quotes_parse_back_to_the_same_value(value: str) -> None:
    expr = field("name").eq(value) & field("tags").has(value) & field("text").contains(value)
    assert check_syntax(str(expr)) is None
    record = {"name": value, "tags": ["x", value], "text": f"<{value}>"}
    assert evaluate(str(expr), {"r": record}) is True
    assert evaluate(str(expr), {"r": {**record, "name": value + "!"}}) is False


def test_literals_of_every_type() -> None:
    assert [literal(v) for v in (True, None, 3, 2.5, ["a", 1])] == ["true", "null", "3", "2.5", "['a', 1]"]
    assert literal(path("a", "b")) == "a.b"


def test_and_or_not_parenthesise_only_where_precedence_needs_it() -> None:
    a, b, c = field("a").eq(1), field("b").eq(2), field("c").eq(3)
    assert str(and_(a, or_(b, c))) == "r.a == 1 and (r.b == 2 or r.c == 3)"
    assert str(or_(and_(a, b), c)) == "r.a == 1 and r.b == 2 or r.c == 3"
    assert str(and_(a, and_(b, c))) == "r.a == 1 and r.b == 2 and r.c == 3"
    assert str(not_(or_(a, b))) == "not (r.a == 1 or r.b == 2)"
    assert str(not_(field("t").contains("x"))) == "not contains(r.t, 'x')"
    record = {"a": 1, "b": 0, "c": 3}
    assert evaluate(str(and_(a, or_(b, c))), {"r": record}) is True
    assert evaluate(str(not_(or_(a, b))), {"r": record}) is False
    with pytest.raises(ValueError):
        and_()


def test_arithmetic_and_templates() -> None:
    total = fn("round", path("facts", "qty") * 4.5, 2)
    assert template(total) == "${round(facts.qty * 4.5, 2)}"
    assert evaluate(str(total), {"facts": {"qty": 3}}) == 13.5
    summed = (arg("to").join(" ") + " ") + arg("cc").join(" ")
    assert evaluate(str(summed.contains("@x.net")), {"args": {"to": ["a@y.com"], "cc": ["b@x.net"]}}) is True
    grouped = field("n") * (field("a") + 1)
    assert str(grouped) == "r.n * (r.a + 1)" and evaluate(str(grouped), {"r": {"n": 2, "a": 3}}) == 8


def test_reference_steps_are_found_by_role() -> None:
    ref = Reference()
    ref.call("contacts_search", {"query": "x"}, save_as="me", role="lookup")
    ref.call("expenses_create_expense", {"amount": 1}, save_as="exp", role="file")
    ref.call("expenses_submit", {"expense_id": "${exp.id}"})
    assert ref.main() is ref.steps[-1], "without a main role, the last call is the key write"
    ref.alias("file", "main")
    assert ref.main() is ref.role("file")
    ref.insert_before("file", {"call": "contacts_search", "args": {"query": "x"}, "say": "again"})
    assert [s["call"] for s in ref][1:3] == ["contacts_search", "expenses_create_expense"]
    again = ref.again("lookup", "The directory changed.")
    assert again == {
        "call": "contacts_search",
        "args": {"query": "x"},
        "save_as": "me",
        "say": "The directory changed.",
    }
    ref.answer("done")
    assert ref.steps[-1] == {"answer": "done"} and len(list(ref.calls())) == 5
    with pytest.raises(KeyError, match="no reference step has the role 'nope'"):
        ref.role("nope")


def test_uses_matches_whole_fact_names_in_values_only() -> None:
    step = {"call": "t", "args": {"n": "${facts.amount}", "list": ["${round(facts.qty * 2, 2)}"]}}
    assert uses(step, "amount") and uses(step, "qty")
    assert not uses(step, "a"), "a slot that prefixes another is not used"
    assert not uses({"call": "facts.amount"} | {"args": {}}, "amounts")
    assert not uses({"call": "t", "args": {"facts.amount": 1}}, "amount"), "keys are not values"


def test_checks_reject_duplicate_ids_and_keep_groups_out_of_the_spec() -> None:
    checks = Checks()
    made = checks.record_exists("sent", "mail", "messages", field("to").has("a@b.c"), 2.0, group="follow_up")
    assert made == RecordExists(id="sent", weight=2.0, service="mail", collection="messages", where="'a@b.c' in r.to")
    assert checks.groups == {"sent": "follow_up"}
    assert checks.count("once", "mail", "messages", field("x").eq(1), 1, required=True).required is True
    with pytest.raises(ValidationError):
        checks.count("bad", "mail", "messages", field("x").eq(1), -1.5)  # a malformed check fails where it is built
    with pytest.raises(ValueError, match="already defined"):
        checks.answer_contains("sent", ["x"])


def test_a_name_with_an_apostrophe_and_quotes_works_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    topic = "O'Brien's \"big\" review"
    monkeypatch.setattr(meeting_scheduling, "TOPICS", (topic,))
    outcome = synthesize(Recipe("meeting_scheduling", 4))
    spec = outcome.spec
    assert spec is not None, outcome.verification.reasons
    booked = next(c for c in spec.checks if c.id == "booked")
    assert "O\\'Brien\\'s" in booked.where
    env = Environment(spec)
    assert play(env, OracleTeacher()).grade.score == 1.0
    assert play(env, PROBES["do_nothing"]).grade.score < PASS_THRESHOLD
