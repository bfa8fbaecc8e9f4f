"""The look-alikes a distractor run uses: the record a check selects, and the number a check wants read."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from coworkenv.runtime import Environment
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.spec.stages import stage_views
from coworkenv.synth.composer import compose, plan
from coworkenv.verify.admission import play, verify
from coworkenv.verify.distractors import Swap, _Fixtures, _fixtures, distractor_swaps, number_swaps, written_like
from coworkenv.verify.gaming import Distractor

BROKEN = Path(__file__).parent / "broken_specs"
MISREAD = Swap(number=(1840.5, 1460.0))


def test_the_look_alike_number_is_the_one_the_loose_check_cannot_tell_apart() -> None:
    """The taxi on the same day shares more fields with the March catering; February's catering is within the
    check's tolerance, so the run posts that one."""
    spec = load_spec(BROKEN / "own_post_number_distractor.yaml")
    [(where, swap)] = number_swaps(spec)
    assert where == "checks[0].value"
    assert swap.number == (1840.5, 1460.0)  # exp-2


def test_without_a_look_alike_within_the_tolerance_the_most_alike_record_is_used() -> None:
    data = yaml.safe_load((BROKEN / "own_post_number_distractor.yaml").read_text())
    data["checks"][0]["tolerance"] = 0.01
    [(_, swap)] = number_swaps(spec_from_data(data))
    assert swap.number == (1840.5, 86.4)  # exp-3: same employee, day, status and receipt


def test_no_number_swap_where_no_fixture_holds_the_number_or_no_other_record_differs() -> None:
    data = yaml.safe_load((BROKEN / "own_post_number_distractor.yaml").read_text())
    data["checks"][0]["value"] = 1926.9  # a total: no single record holds it
    assert number_swaps(spec_from_data(data)) == []
    data["checks"][0]["value"] = 1840.5
    for rec in data["services"]["expenses"]["expenses"]:
        rec["amount"] = 1840.5  # every look-alike holds the same number: nothing to misread
    assert number_swaps(spec_from_data(data)) == []


def test_the_record_swaps_come_first_and_keep_their_labels() -> None:
    spec = load_spec(BROKEN / "own_post_number_distractor.yaml")
    assert [w for w, _ in distractor_swaps(spec)] == ["checks[0]", "checks[0].value"]
    loose = load_spec(BROKEN / "loose_distractor.yaml")
    assert [(w, s.number) for w, s in distractor_swaps(loose)] == [("checks[0]", None)]


def test_the_misread_number_is_written_as_the_right_one_was() -> None:
    assert written_like("1,840.50", 1460.0) == "1,460.00"
    assert written_like("1840.5", 1460.0) == "1460.0"
    assert written_like("1840", 1460.25) == "1460.25"  # never rounds the look-alike away
    text = "March came to $1,840.50 (1840.5 USD), see exp-1840.5 on 2025-03-21 at 18:40."
    assert MISREAD.apply(text) == "March came to $1,460.00 (1460.0 USD), see exp-1840.5 on 2025-03-21 at 18:40."


def test_numbers_in_arguments_are_swapped_at_any_depth_and_others_are_kept() -> None:
    args = {"amount": 1840.5, "count": 2, "lines": [{"total": 1840.5, "flag": True}], "note": "1840.5"}
    assert MISREAD.apply(args) == {
        "amount": 1460.0,
        "count": 2,
        "lines": [{"total": 1460.0, "flag": True}],
        "note": "1460.0",
    }
    assert Swap(number=(1840.0, 1460.0)).apply({"amount": 1840}) == {"amount": 1460}  # an int stays an int


def test_a_swap_is_used_only_where_the_calls_hold_its_value() -> None:
    calls = [[{"function": {"name": "chat_post_message", "arguments": '{"text": "it came to 1840.5 USD"}'}}]]
    assert MISREAD.used_in(calls)
    assert not MISREAD.used_in([[{"function": {"arguments": '{"text": "it came to 1840.55 USD"}'}}]])
    assert Swap(texts={"sam.ortiz@corp.com": "sam.ortiz@partner.com"}).used_in([[{"arguments": "sam.ortiz@corp.com"}]])


def test_the_finding_says_the_check_is_too_loose_for_the_look_alike() -> None:
    report = verify(load_spec(BROKEN / "own_post_number_distractor.yaml"))
    [finding] = [f for f in report.findings if f.where == "probe:distractor[checks[0].value]"]
    assert "look-alike record's number" in finding.hint and "tolerance" in finding.hint
    assert not report.probes["distractor[checks[0].value]"].failed  # no check tells the two figures apart


def test_the_misread_amount_goes_into_the_agents_own_expense() -> None:
    """A number argument (the new expense's amount) is swapped, not only text: the run files February's stay."""
    spec = load_spec(BROKEN / "own_expense_number_distractor.yaml")
    [(_, swap)] = number_swaps(spec)
    assert swap.number == (912.4, 860.0)  # inv-1, within the loose 60
    env = Environment(spec)
    play(env, Distractor().variants(spec)[0][1])
    [filed] = [e for e in env.workspace.records("expenses", "expenses").values() if e["category"] == "lodging"]
    assert filed["amount"] == 860.0 and env.grade().passed


def _subject_by_scan(spec: Any, text: str) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The subject as defined (every record's values lowered and looked for, for each check anew)."""
    low = text.lower()
    quoted = [q.lower() for q in re.findall(r"'([^']{4,})'", text.replace("\\'", ""))]
    best, loose = None, None
    for collections in spec.services.values():
        for records in collections.values():
            for rec in records:
                hits = sum(
                    (3 if k in ("id", "email", "name") else 1)
                    for k, v in rec.items()
                    if isinstance(v, str) and len(v) >= 4 and v.lower() in low
                )
                if hits and (best is None or hits > best[0]):
                    best = (hits, records, rec)
                keys = [str(rec.get(k, "")).lower() for k in ("id", "email", "name")]
                if loose is None and any(q in k for q in quoted for k in keys):
                    loose = (records, rec)
    return (best[1], best[2]) if best else loose


def test_the_subject_found_once_lowered_is_the_one_a_scan_finds() -> None:
    """Fixtures lowered once per spec give each check the subject a fresh scan gives (loose and exact matches)."""
    examples = Path(__file__).parent.parent / "examples"
    specs = [load_spec(p) for p in sorted(examples.glob("*.yaml"))]
    specs += [compose(plan(0, i)) for i in range(40)]
    found = 0
    for spec in specs:
        fixtures = _Fixtures(spec.services)
        texts = [repr(c.model_dump()) for c in spec.checks] + ["{'email': 'sam.ortiz'}", "{'x': 'none-of-these'}"]
        for text in texts:
            mine, theirs = fixtures.subject(text), _subject_by_scan(spec, text)
            assert (mine is None) == (theirs is None), text
            if mine is not None and theirs is not None:
                found += 1
                assert mine[0] is theirs[0] and mine[1] is theirs[1], text
    assert found >= 100


def _likeness_by_scan(a: dict[str, Any], b: dict[str, Any]) -> float:
    same = sum(1 for k, v in a.items() if k != "id" and b.get(k) == v)
    words_a = {w for v in a.values() if isinstance(v, str) for w in v.lower().split()}
    words_b = {w for v in b.values() if isinstance(v, str) for w in v.lower().split()}
    return same + 0.5 * len(words_a & words_b)


def test_likeness_with_words_split_once_is_the_likeness_a_scan_gives() -> None:
    """Each record's words, split once per spec's fixtures, give every pair of records the likeness of a fresh scan;
    the stage views of a spec share one set of fixture entries."""
    for i in range(20):
        spec = compose(plan(0, i))
        fixtures = _Fixtures(spec.services)
        for collections in spec.services.values():
            for records in collections.values():
                for a in records[:6]:
                    for b in records[:6]:
                        assert fixtures.likeness(a, b) == _likeness_by_scan(a, b)
        if spec.stages:
            views = stage_views(spec)
            assert _fixtures(views[0]) is _fixtures(views[-1])


def test_a_loose_literal_is_found_within_one_key_never_across_two() -> None:
    """The keys are searched joined by a line break: a literal that holds one (in a name that has one) is found
    in that key, and one that would span the end of one key and the start of the next is no match."""
    first = {"id": "c-1", "email": "ann@corp.com", "name": "Ann Abcd"}
    second = {"id": "c-2", "email": "lee@corp.com", "name": "Lee\nZwyx"}
    fixtures = _Fixtures({"contacts": {"contacts": [first, second]}})
    assert fixtures.subject("{'name': 'abcd\nc-2'}") is None  # the end of Ann's name, a break, Lee's id
    found = fixtures.subject("{'name': 'ee\nzw'}")
    assert found is not None and found[1] is second
    found = fixtures.subject("{'email': 'ann@corp', 'name': 'ee\nzw'}")
    assert found is not None and found[1] is first, "the first record holding any of the literals"
