"""Inbox triage: one check per triaged message, and the guard admits exactly those."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build, check


class TestInboxTriage(BlueprintCases):
    name = "inbox_triage"

    def test_every_triaged_message_is_checked_and_guarded(self) -> None:
        draft = build(self.name)
        touched = [
            c.id.split("_", 1)[1] for c in draft.checks if c.id.split("_")[0] in ("archived", "customer", "urgent")
        ]
        assert touched
        assert check(draft, "mail_guard").allow == f"r.id in {touched} or r.folder == 'sent'"
        assert draft.reference.main()["args"]["label"] == "urgent"

    def test_the_late_urgent_mail_is_the_event_group(self) -> None:
        draft = build(self.name, frozenset({"dynamic"}))
        assert draft.checks.groups == {"urgent_msg-x1": "event"}
