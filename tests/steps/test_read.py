"""read: what is read belongs to the target account, and a careless read gives a wrong result."""

from __future__ import annotations

import pytest
from step_cases import admitted, chain_of, edit_call, records, score


def test_open_tickets_of_the_target_and_decoys_around_them() -> None:
    chain = chain_of(3, "locate_by_name", "read_tickets")
    company = chain.need("account").record["name"]
    mine = chain.need("tickets").record["tickets"]
    tickets = chain.world.fixtures["tickets"]["tickets"]
    assert len(mine) >= 2 and all(t["customer"] == company and t["status"] == "open" for t in mine)
    assert any(t["customer"] == company and t["status"] != "open" for t in tickets)  # closed ones are left out
    assert any(t["customer"] != company and t["status"] == "open" for t in tickets)  # others' open ones too
    assert sum(t["priority"] == "high" for t in mine) == 1


def test_counting_every_ticket_of_the_customer_fails() -> None:
    spec = admitted(3, "locate_by_name", "read_tickets", "derive_count", "act_log", "report")
    assert score(spec) == 1.0
    careless = edit_call(spec, "tickets_search", lambda a: {k: v for k, v in a.items() if k != "status"})
    assert score(spec, careless) < 0.75


@pytest.mark.parametrize("read", ["read_contacts", "read_account"])
def test_the_primary_contact_gets_the_mail_not_the_other_one(read: str) -> None:
    spec = admitted(6, "locate_by_attribute", read, "act_email_contact")
    account = records(spec, "crm", "accounts")[0]["id"]
    people = [c for c in records(spec, "crm", "contacts") if c["account_id"] == account]
    assert len(people) == 2 and people[0]["primary"] and not people[1].get("primary")
    wrong = edit_call(spec, "mail_send", lambda a: {**a, "to": [people[1]["email"]]})
    assert score(spec, wrong) < 0.75


def test_deals_of_the_stage_named_and_a_sum_over_every_stage_fails() -> None:
    spec = admitted(8, "locate_by_name", "read_deals", "derive_sum", "act_log", "notify_channel", "report")
    stage = next(s.args["stage"] for s in spec.reference if getattr(s, "call", "") == "crm_list_deals")
    deals = [d for d in records(spec, "crm", "deals") if d["account_id"] == "acc-1"]
    assert {d["stage"] for d in deals} - {stage}  # other stages of the same account are there to be left out
    careless = edit_call(spec, "crm_list_deals", lambda a: {"account_id": a["account_id"]})
    assert score(spec, careless) < 0.75
