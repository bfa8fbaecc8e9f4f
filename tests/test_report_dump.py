"""Reports a dump cannot satisfy: an answer check may exclude a look-alike's value, the generators exclude the
look-alikes of what they ask for and put one where the agent reads, and the dump probe runs wherever a report is
checked (not only where an answer check is required)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from coworkenv.spec import SpecError, load_spec, spec_from_data
from coworkenv.spec.checks import AnswerContains, AnswerNumber
from coworkenv.spec.checks.answers import excluded_in
from coworkenv.synth.look_alikes import anchors, look_alike_values, versions, with_exclusions
from coworkenv.verify import verify
from coworkenv.verify.gaming import _SEEN_NAME, _SEEN_NAME_NO_ADDRESS, _SEEN_NUMBER, seen_values

BROKEN = Path(__file__).parent / "broken_specs"


def _data(name: str) -> dict[str, Any]:
    return yaml.safe_load((BROKEN / f"{name}.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("excluded", "text", "found"),
    [
        (("tkt-1",), "assigned tkt-12", None),
        (("tkt-1",), "assigned tkt-1.", "tkt-1"),
        (("10:00",), "at 2025-03-04T10:00", "10:00"),
        (("420.00",), "charged 1420.00", None),
        (("410.5",), "the other fare, $410.50", "410.5"),
        (("1200",), "worth $1,200 in total", "1200"),
        (("kim.wu@corp.com",), "KIM.WU@corp.com is on call", "kim.wu@corp.com"),
    ],
)
def test_excluded_values_match_whole_tokens_and_quantities(excluded: tuple[str, ...], text: str, found: str) -> None:
    assert excluded_in(excluded, text) == found


def test_a_value_also_excluded_cannot_be_stated() -> None:
    with pytest.raises(ValueError, match="item 0 is also in excludes"):
        AnswerContains(id="told", values=["Sam"], excludes=["sam"])
    with pytest.raises(SpecError, match=r"excludes"):
        data = _data("report_dump_light")
        data["checks"][2]["excludes"] = [" kim.wu@corp.com"]
        spec_from_data(data)


def test_the_look_alikes_are_the_same_field_of_the_other_records_in_the_shape_asked() -> None:
    fixtures = {
        "mail": {
            "messages": [
                {"id": "msg-1", "body": "Fare: 317.97 USD, departs 2025-03-04T10:00"},
                {"id": "msg-2", "body": "Fare: 410.50 USD, departs 2025-03-05T11:30"},
            ]
        },
        "expenses": {"expenses": [{"id": "exp-1", "amount": 12.5}, {"id": "exp-2", "amount": 7.0}]},
    }
    assert look_alike_values("317.97", fixtures) == ["410.50"]
    assert look_alike_values("10:00", fixtures) == ["11:30"]
    assert look_alike_values("12.50", fixtures) == ["7.00"]
    assert look_alike_values("exp-1", fixtures) == ["exp-2"]
    assert look_alike_values("nowhere", fixtures) == []


def test_an_update_makes_the_value_it_replaces_a_look_alike() -> None:
    """The on-call swap: the engineer before it is the look-alike of the one after it; added records are not."""
    fixtures = {"tickets": {"oncall": [{"id": "shift-1", "team": "infra", "engineer": "lisa@corp.com"}]}}
    swap = {"service": "tickets", "collection": "oncall", "op": "update", "id": "shift-1"}
    added = {"service": "tickets", "collection": "oncall", "op": "insert", "record": {"engineer": "new@corp.com"}}
    world = versions(fixtures, [{**swap, "record": {"engineer": "kim@corp.com"}}, added])
    assert look_alike_values("kim@corp.com", world) == ["lisa@corp.com"]
    assert fixtures["tickets"]["oncall"] == [{"id": "shift-1", "team": "infra", "engineer": "lisa@corp.com"}]


def test_the_report_templates_name_their_literal_values_only() -> None:
    text = "Assigned tkt-4 to ${oc.engineer} at 10:30 for 99.50 USD; mail a.b@corp.com"
    assert anchors([text, "Done."]) == ["tkt-4", "10:30", "99.50", "a.b@corp.com"]


def test_exclusions_keep_what_any_report_must_state() -> None:
    fixtures = {"crm": {"accounts": [{"id": "acc-1", "name": "Ruiz Labs"}, {"id": "acc-2", "name": "Ruiz Foods"}]}}
    told = AnswerContains(id="told", values=["Ruiz Labs"])
    assert with_exclusions(told, fixtures, set(), []).excludes == ["Ruiz Foods"]
    assert with_exclusions(told, fixtures, {"ruiz foods"}, []).excludes == []
    figure = AnswerNumber(id="total", value=1234.5)
    assert with_exclusions(figure, fixtures, set(), []) is figure  # a computed figure: no record holds it


def test_a_light_report_check_a_dump_satisfies_is_rejected_and_an_exclusion_in_view_fixes_it() -> None:
    """The dump probe runs although no answer check is required; the check that excludes the other engineer, whom
    the reference's reads show, is what a dump fails."""
    report = verify(load_spec(BROKEN / "report_dump_light.yaml"))
    assert [f.where for f in report.findings] == ["probe:report_dump"]
    assert "excludes" in report.findings[0].hint
    data = _data("report_dump_light")
    data["services"]["contacts"]["contacts"].append(
        {"id": "con-2", "name": "Kim Wu", "email": "kim.wu@corp.com", "department": "Engineering"}
    )
    data["reference"][1]["args"]["query"] = "Engineering"  # the look-alike is in view
    assert not verify(spec_from_data(data)).admitted  # in view, but nothing excludes it
    data["checks"][2]["excludes"] = ["kim.wu@corp.com"]
    fixed = verify(spec_from_data(data))
    assert fixed.admitted, [f.line() for f in fixed.findings]
    assert fixed.probe_scores["report_dump"] < 0.75


@given(st.text(alphabet="Ab z-_.+@1,9 TKmsg\n", max_size=60))
def test_the_dump_finds_in_a_text_without_an_at_what_the_full_pattern_finds(text: str) -> None:
    """The address branch is skipped where no @ is: the names, ids and numbers found must be the same."""
    full = ", ".join(dict.fromkeys([*_SEEN_NUMBER.findall(text), *_SEEN_NAME.findall(text)]))
    assert seen_values([{"role": "tool", "content": text}]) == full
    if "@" not in text:
        assert _SEEN_NAME_NO_ADDRESS.findall(text) == _SEEN_NAME.findall(text)


def test_the_dump_lists_addresses_where_a_text_has_them() -> None:
    text = "Ann Lee.x@y.com wrote about TKT-12 and msg-3 for $1,200"
    assert seen_values([{"role": "tool", "content": text}]) == "-12, -3, 1,200, Ann Lee, .x@y.com, TKT-12, msg-3"
