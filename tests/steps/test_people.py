"""People steps: the colleague named (not the namesake) is updated and told; a new contact is added once."""

from __future__ import annotations

import pytest
from step_cases import admitted, answered, edit_call, reads, records, score, twice, without

CHAINS = {
    "contacts_update": ("locate_person", "act_update_contact", "notify_dm_person", "report"),
    "contacts_create": ("start_add_contact", "report"),
    "mail_send": ("locate_person", "notify_mail_person", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(51, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_updating_the_namesake_fails() -> None:
    spec = admitted(52, *CHAINS["contacts_update"])
    person = spec.reference[0].args["query"]  # type: ignore[union-attr]
    first = person.split()[0]
    namesake = next(
        c for c in records(spec, "contacts", "contacts") if c["name"].startswith(first + " ") and c["name"] != person
    )
    wrong = edit_call(spec, "contacts_update", lambda a: {**a, "contact_id": namesake["id"]})
    assert score(spec, wrong) < 0.75


def test_the_new_contact_gets_the_address_of_their_mail_and_adding_twice_fails() -> None:
    spec = admitted(53, *CHAINS["contacts_create"])
    assert score(spec, twice(spec, "contacts_create")) == 1.0  # the service refuses a second entry of one address
    assert len([c for c in records(spec, "contacts", "contacts") if "@" in c["email"]]) >= 4
    wrong = edit_call(spec, "contacts_create", lambda a: {**a, "email": "someone@example.com"})
    assert score(spec, wrong) < 0.75


def test_the_other_senders_are_seen_and_adding_one_fails() -> None:
    spec = admitted(54, *CHAINS["contacts_create"])
    mails = records(spec, "mail", "messages")
    others = [m["sender"] for m in mails if "Introduction" not in m["subject"]]
    assert others and all(o in reads(spec) for o in others)
    wrong = edit_call(spec, "contacts_create", lambda a: {**a, "email": others[0]})
    assert score(spec, wrong) < 0.75
    assert score(spec, answered(spec, f"Done. I added {others[0]} to the directory.")) < 0.75
