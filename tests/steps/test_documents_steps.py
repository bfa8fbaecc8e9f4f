"""Document steps: the live plan (not the archived copy) or one meeting's notes is shared, edited or added to."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, twice, without

CHAINS = {
    "documents_share": ("locate_meeting_notes", "act_share_document", "notify_dm_person", "report"),
    "documents_update": ("locate_document", "act_update_document", "notify_channel", "report"),
    "documents_append": ("locate_document", "act_append_document", "notify_channel", "report"),
    "documents_create": ("start_handover_doc", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(61, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_appending_the_decision_twice_fails() -> None:
    for seed in range(62, 66):
        spec = admitted(seed, *CHAINS["documents_append"])
        assert score(spec, twice(spec, "documents_append")) < 0.75


def test_editing_the_archived_copy_fails_and_the_rest_of_the_plan_must_stay() -> None:
    spec = admitted(66, *CHAINS["documents_update"])
    archived = next(d for d in records(spec, "documents", "documents") if d["path"].startswith("/Archive/"))
    wrong = edit_call(spec, "documents_update", lambda a: {**a, "document_id": archived["id"]})
    assert score(spec, wrong) < 0.75
    lossy = edit_call(spec, "documents_update", lambda a: {**a, "content": a["content"].split("\n")[-2]})
    assert score(spec, lossy) < 0.75


def test_the_notes_of_another_date_are_look_alikes() -> None:
    spec = admitted(67, *CHAINS["documents_share"])
    notes = [d for d in records(spec, "documents", "documents") if d["path"].startswith("/Meetings/")]
    assert len(notes) == 3
    others = [d for d in notes if d["path"].split("/")[2].split()[0] not in spec.user.opening]
    assert len(others) == 2
    for other in others:
        wrong = edit_call(spec, "documents_share", lambda a, o=other: {**a, "document_id": o["id"]})
        assert score(spec, wrong) < 0.75
