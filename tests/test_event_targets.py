"""Changes that name their record by ``where``: resolved on the live workspace when they are made, so an event
(of the spec or of a stage) or a change between stages can reach a record the agent created earlier; the
verifier rejects one that, in the reference run, finds no record or several."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from coworkenv.runtime import Environment
from coworkenv.runtime.events import Miss, target
from coworkenv.spec import Mutation, SpecError, spec_from_data
from coworkenv.verify import static_findings, verify
from minispec import call, say

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "printer_ticket_picked_up_two_days.yaml"
BEFORE = ROOT / "tests" / "broken_specs" / "event_before_record.yaml"
DATA: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
POST = call("chat_post_message", {"channel": "facilities", "text": "The 4th-floor printer keeps jamming."}, "c1")
OPEN = call("tickets_create", {"title": "4th-floor printer jams", "team": "facilities", "description": "Jams."}, "c2")
ASK = call("chat_post_message", {"channel": "facilities", "text": "Has anyone picked up the printer ticket?"}, "c3")
LOOK = call("tickets_search", {"team": "facilities"}, "c4")
SELECTOR = "r.team == 'facilities' and r.status == 'open' and contains(lower(r.title), 'printer')"


def _data() -> dict[str, Any]:
    return copy.deepcopy(DATA)


def _ticket(env: Environment, rid: str = "tkt-11") -> dict[str, Any]:
    return env.workspace.records("tickets", "tickets")[rid]


def _day_two(env: Environment, day_one: list[Any]) -> None:
    """``day_one``'s turns and the report, then Tuesday's question and one look (the event's ``after: 1``)."""
    env.reset()
    for turn in [*day_one, say("Done: I told Facilities and opened the ticket."), ASK, LOOK]:
        env.step(turn)
    assert env.stages is not None and env.stages.index == 1 and "facilities-pick-up" in env.fired


def test_a_stage_event_changes_the_ticket_the_agent_opened_the_day_before() -> None:
    env = Environment(spec_from_data(_data()))
    _day_two(env, [POST, OPEN])
    ticket = _ticket(env)
    assert (ticket["status"], ticket["assignee"]) == ("in_progress", "mo.ellis@northwind.io")
    assert env.scheduler.missed == []
    assert _ticket(env, "tkt-4")["status"] == "resolved"  # the other printer ticket is not the open one


def test_the_change_finds_nothing_if_the_agent_closed_the_ticket_first() -> None:
    """The agent resolved its ticket on Monday: nothing matches on Tuesday, so the event changes nothing (its
    message still arrives), and the miss is noted."""
    env = Environment(spec_from_data(_data()))
    close = call("tickets_update", {"ticket_id": "tkt-11", "status": "resolved"}, "c5")
    _day_two(env, [POST, OPEN, close])
    assert (_ticket(env)["status"], _ticket(env)["assignee"]) == ("resolved", None)
    assert "cm-fac-pickup" in env.workspace.records("chat", "messages")
    assert env.scheduler.missed == [Miss("facilities-pick-up", 1, 0)]


def test_with_two_candidates_the_first_in_the_collections_order_changes() -> None:
    """The agent opened two printer tickets: the earlier one is taken, and the ambiguity is noted."""
    env = Environment(spec_from_data(_data()))
    again = call("tickets_create", {"title": "Printer jam again", "team": "facilities", "description": "."}, "c6")
    _day_two(env, [POST, OPEN, again])
    assert _ticket(env)["assignee"] == "mo.ellis@northwind.io" and _ticket(env, "tkt-12")["assignee"] is None
    assert env.scheduler.missed == [Miss("facilities-pick-up", 1, 2)]


def test_an_event_that_fires_before_the_record_exists_changes_nothing_and_is_rejected() -> None:
    spec = spec_from_data(yaml.safe_load(BEFORE.read_text()))
    env = Environment(spec)
    env.reset()
    env.step(POST)  # fires now: no ticket yet
    env.step(OPEN)
    assert "mo-takes-it" in env.fired and _ticket(env)["assignee"] is None
    [finding] = verify(spec).findings
    assert (finding.kind, finding.where) == ("unresolved_reference", "events[0].mutations[1]")
    assert "no tickets.tickets record matches" in finding.evidence


def test_the_same_event_fired_after_the_ticket_is_made_takes_it() -> None:
    """The control: one step later (``after: 1``), the reference's ticket exists when the event fires."""
    data = yaml.safe_load(BEFORE.read_text())
    data["events"][0]["after"] = 1
    spec = spec_from_data(data)
    env = Environment(spec)
    env.reset()
    env.step(POST)
    env.step(OPEN)
    assert _ticket(env)["assignee"] == "mo.ellis@northwind.io" and env.scheduler.missed == []
    assert not [f for f in verify(spec).findings if f.kind == "unresolved_reference"]


def test_a_record_the_agent_deleted_is_not_changed_and_nothing_breaks() -> None:
    """A real deletion: the agent shares a file, then revokes it; the event that fires next finds nothing."""
    data: dict[str, Any] = {
        "id": "drive-revoke",
        "title": "Share the plan, then take it back",
        "services": {
            "drive": {
                "folders": [{"id": "fld-1", "name": "Plans", "owner": "me@corp.io"}],
                "files": [{"id": "f-1", "name": "Plan", "folder_id": "fld-1", "content": "v1", "owner": "me@corp.io"}],
            }
        },
        "user": {"persona": "me", "opening": "Share the plan with Ann as an editor."},
        "events": [
            {
                "id": "ann-downgraded",
                "on_tool": "drive_list_access",
                "mutations": [
                    {
                        "service": "drive",
                        "collection": "permissions",
                        "op": "update",
                        "where": "r.person == 'ann@corp.io'",
                        "record": {"role": "viewer"},
                    }
                ],
            }
        ],
        "checks": [
            {"id": "shared", "kind": "record_exists", "service": "drive", "collection": "permissions", "where": "true"}
        ],
        "reference": [
            {"call": "drive_share", "args": {"item_id": "f-1", "person": "ann@corp.io", "role": "editor"}},
            {"answer": "Shared."},
        ],
    }
    env = Environment(spec_from_data(data))
    env.reset()
    env.step(call("drive_share", {"item_id": "f-1", "person": "ann@corp.io", "role": "editor"}))
    env.step(call("drive_revoke", {"item_id": "f-1", "person": "ann@corp.io"}, "c2"))
    obs = env.step(call("drive_list_access", {"item_id": "f-1"}, "c3"))
    assert not obs.done and "ann-downgraded" in env.fired
    assert env.workspace.records("drive", "permissions") == {}
    assert env.scheduler.missed == [Miss("ann-downgraded", 0, 0)]


def test_a_change_between_stages_reaches_the_record_an_earlier_stage_made() -> None:
    data = _data()
    data["stages"][0]["mutations"] = [
        {
            "service": "tickets",
            "collection": "tickets",
            "op": "update",
            "where": SELECTOR,
            "record": {"priority": "high"},
        }
    ]
    env = Environment(spec_from_data(data))
    _day_two(env, [POST, OPEN])
    assert _ticket(env)["priority"] == "high" and env.stages is not None and env.stages.missed == []
    data["stages"][0]["mutations"][0]["where"] = "r.team == 'hr'"
    [finding] = [f for f in verify(spec_from_data(data)).findings if f.kind == "unresolved_reference"]
    assert finding.where == "stages[0].mutations[0]"


def test_the_example_is_admitted_and_ignoring_the_event_fails() -> None:
    report = verify(spec_from_data(_data()))
    assert report.admitted, [f.line() for f in report.findings]
    assert report.probe_scores["ignore_event@stage2"] < 0.75


def test_target_picks_the_first_match_in_order_and_counts_them() -> None:
    records = {"t": {"a": {"id": "a", "n": 1}, "b": {"id": "b", "n": 2}, "c": {"id": "c", "n": 2}}}
    update = Mutation(service="s", collection="t", op="update", where="r.n == 2", record={"n": 3})
    resolved, matches = target(update, lambda _s, c: records[c])
    assert resolved is not None and (resolved.id, resolved.where, matches) == ("b", None, 2)
    assert target(update.model_copy(update={"where": "r.n == 9"}), lambda _s, c: records[c]) == (None, 0)
    assert target(update.model_copy(update={"where": "r.nope.deeper == 1"}), lambda _s, c: records[c]) == (None, 0)


@pytest.mark.parametrize(
    ("mutation", "problem"),
    [
        ({"op": "update", "record": {"status": "open"}}, "update needs exactly one of 'id' and 'where'"),
        ({"op": "delete", "id": "tkt-1", "where": "true"}, "delete needs exactly one of 'id' and 'where'"),
        ({"op": "insert", "record": {"id": "x"}, "where": "true"}, "insert takes no 'where'"),
        ({"op": "delete", "where": "r.id == '${args.ticket_id}'"}, "no '${...}' templates"),
    ],
)
def test_a_malformed_change_by_selector_is_refused_with_its_place(mutation: dict[str, Any], problem: str) -> None:
    data = _data()
    data["stages"][0]["events"][0]["mutations"][1] = {"service": "tickets", "collection": "tickets", **mutation}
    with pytest.raises(SpecError) as raised:
        spec_from_data(data)
    assert "stages[0].events[0].mutations[1]" in str(raised.value) and problem in str(raised.value)


@pytest.mark.parametrize(
    ("where", "kind"),
    [("args.ticket_id == r.id", "unresolved_reference"), ("r.team ==", "schema")],
)
def test_a_selector_must_parse_and_read_only_the_record(where: str, kind: str) -> None:
    data = _data()
    data["stages"][0]["events"][0]["mutations"][1]["where"] = where
    findings = static_findings(spec_from_data(data))
    assert [(f.kind, f.where) for f in findings] == [(kind, "stages[0].events[0].mutations[1].where")]
