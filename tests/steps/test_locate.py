"""locate: the CRM account is found among look-alikes, and acting on a look-alike fails."""

from __future__ import annotations

import pytest
from step_cases import admitted, chain_of, edit_call, records, score

from coworkenv.synth.steps.locate import LOCATE

NAMES = [s.name for s in LOCATE]


@pytest.mark.parametrize("name", NAMES)
def test_the_chain_is_admitted_and_the_same_write_on_a_look_alike_fails(name: str) -> None:
    spec = admitted(4, name, "act_log", "notify_dm")
    target = spec.reference[[getattr(s, "call", "") for s in spec.reference].index("crm_log_activity")]
    accounts = records(spec, "crm", "accounts")
    assert len(accounts) >= 3
    assert score(spec) == 1.0
    for decoy in accounts[1:]:
        assert decoy["id"] != "acc-1"
        wrong = edit_call(spec, "crm_log_activity", lambda a, d=decoy: {**a, "account_id": d["id"]})
        assert score(spec, wrong) < 0.75, (target, decoy)


def test_by_name_the_stem_alone_matches_two_accounts() -> None:
    chain = chain_of(9, "locate_by_name")
    stem = chain.facts["stem"].value
    accounts = chain.world.fixtures["crm"]["accounts"]
    assert sum(a["name"].split()[0] == stem for a in accounts) == 2
    broad, narrow = list(chain.reference.calls())[:2]
    assert broad["args"] == {"query": stem}  # both accounts of the stem in view: the report must name the right one
    assert narrow["args"] == {"query": stem, "industry": chain.need("account").record["industry"]}


def test_by_attribute_no_decoy_shares_both_tier_and_industry() -> None:
    for seed in range(20):
        chain = chain_of(seed, "locate_by_attribute")
        target = chain.need("account").record
        assert not any(d["tier"] == target["tier"] and d["industry"] == target["industry"] for d in chain.decoys)


def test_from_mail_the_mail_names_the_customer_and_other_customers_wrote_too() -> None:
    chain = chain_of(5, "locate_from_mail")
    mail = chain.need("mail").record
    assert chain.need("account").record["name"] in mail["body"]
    assert chain.facts["issue"].value in mail["subject"]
    others = [m for m in chain.world.fixtures["mail"]["messages"] if m["subject"].startswith("Problem:")]
    assert len(others) >= 3


def test_from_ticket_the_account_is_searched_by_the_ticket_customer() -> None:
    chain = chain_of(5, "locate_from_ticket")
    calls = list(chain.reference.calls())
    assert [c["call"] for c in calls] == ["tickets_search", "tickets_search", "crm_search_accounts"]
    assert calls[0]["args"] == {"status": "open"}  # every open ticket: the other customers' complaints in view
    assert calls[2]["args"]["query"] == "${complaint.tickets[0].customer}"
    assert chain.need("ticket").record["customer"] == chain.need("account").record["name"]
