"""Blueprints guard every collection their reference writes, so a cheat that also rewrites another record fails."""

from __future__ import annotations

from coworkenv.bank.repair import attempt
from coworkenv.spec.checks import KINDS, CheckModel
from coworkenv.synth.composer import Recipe
from coworkenv.synth.guards import written_guards

FIXTURES = {"mail": {"messages": [], "folders": []}, "tickets": {"tickets": [], "comments": []}}


def _check(**data: object) -> CheckModel:
    return KINDS[str(data["kind"])].model_validate({"weight": 1.0, **data})


def test_a_written_collection_without_a_guard_gets_one_allowing_what_the_checks_name() -> None:
    checks = [
        _check(kind="record_exists", id="sent", service="mail", collection="messages", where="r.folder == 'sent'"),
        _check(
            kind="field_equals",
            id="x",
            service="tickets",
            collection="tickets",
            record_id="tkt-4",
            field="status",
            value="closed",
        ),
    ]
    guards = written_guards(checks, ["mail_send", "tickets_update", "mail_search"], FIXTURES, {})
    by_where = {(g.service, g.collection): g for g in guards if g.kind == "unchanged"}
    assert by_where[("mail", "messages")].allow == "(r.folder == 'sent')"
    assert by_where[("tickets", "tickets")].allow == "r.id == 'tkt-4'"
    assert all(g.required for g in guards)


def test_no_guard_where_one_is_there_or_nothing_is_written() -> None:
    guard = _check(kind="unchanged", id="g", service="mail", collection="messages", allow="r.folder == 'sent'")
    assert "messages" not in [g.collection for g in written_guards([guard], ["mail_send"], FIXTURES, {})]
    assert "messages" in [g.collection for g in written_guards([], ["mail_send"], FIXTURES, {})]
    assert written_guards([], ["mail_search", "tickets_search"], FIXTURES, {}) == []
    assert written_guards([], ["no_such_tool"], FIXTURES, {}) == []


def test_a_later_stage_guard_carries_the_stage_id() -> None:
    (first, *_), (later, *_) = (written_guards([], ["mail_send"], FIXTURES, {}, s) for s in ("", "day_two"))
    assert first.id != later.id and later.id.endswith("_day_two")


def test_incident_communication_guards_the_mail_it_sends() -> None:
    """The reference mails, posts and comments; moving another mail to the trash must fail the spec's checks."""
    spec, report = attempt(Recipe(blueprint="incident_communication", seed=3))
    assert spec is not None and report.admitted, [f.line() for f in report.findings]
    guarded = {(c.service, c.collection) for c in spec.checks if c.kind == "unchanged"}
    assert ("mail", "messages") in guarded
    assert report.probe_scores["collateral_write[mail.messages]"] < 0.75
