"""derive: counts, sums, picks and dates are what the records say, and a wrong pick fails."""

from __future__ import annotations

from step_cases import admitted, chain_of, edit_call, records, score

from coworkenv.spec.checks import AnswerCounts, AnswerNumber


def test_the_count_is_the_number_of_open_tickets_and_the_report_must_state_it() -> None:
    chain = chain_of(2, "locate_by_name", "read_tickets", "derive_count")
    count = next(c for c in chain.checks if isinstance(c, AnswerCounts))
    assert count.counts == {"open ticket": len(chain.need("tickets").record["tickets"])}
    assert "information_synthesis" in chain.capabilities


def test_the_sum_is_the_total_of_the_stage_deals() -> None:
    chain = chain_of(2, "locate_by_name", "read_deals", "derive_sum")
    total = next(c for c in chain.checks if isinstance(c, AnswerNumber))
    assert total.value == sum(d["amount"] for d in chain.need("deals").record["deals"])


def test_escalating_another_open_ticket_than_the_urgent_one_fails() -> None:
    spec = admitted(5, "locate_by_name", "read_tickets", "derive_pick_ticket", "act_assign", "report")
    urgent = [t for t in records(spec, "tickets", "tickets") if t["priority"] == "high" and t["status"] == "open"]
    company = records(spec, "crm", "accounts")[0]["name"]
    assert [t["customer"] for t in urgent] == [company]
    other = next(
        t
        for t in records(spec, "tickets", "tickets")
        if t["customer"] == company and t is not urgent[0] and t["status"] == "open"
    )
    wrong = edit_call(spec, "tickets_assign", lambda a: {**a, "ticket_id": other["id"]})
    assert score(spec, wrong) < 0.75


def test_advancing_a_smaller_deal_fails() -> None:
    spec = admitted(7, "locate_by_name", "read_deals", "derive_pick_deal", "act_update_deal", "notify_dm")
    deal = next(s.args["deal_id"] for s in spec.reference if getattr(s, "call", "") == "crm_update_deal")
    picked = next(d for d in records(spec, "crm", "deals") if d["id"] == deal)
    peers = [d for d in records(spec, "crm", "deals") if d["account_id"] == "acc-1" and d["stage"] == picked["stage"]]
    assert picked["amount"] == max(d["amount"] for d in peers) and len(peers) >= 2
    smaller = next(d for d in peers if d is not picked)
    wrong = edit_call(spec, "crm_update_deal", lambda a: {**a, "deal_id": smaller["id"]})
    assert score(spec, wrong) < 0.75


def test_the_deadline_is_the_renewal_date_and_another_date_fails() -> None:
    spec = admitted(3, "locate_by_attribute", "derive_deadline", "act_create_ticket", "notify_dm")
    renewal = records(spec, "crm", "accounts")[0]["renewal_date"]
    create = next(s for s in spec.reference if getattr(s, "call", "") == "tickets_create")
    assert create.args["due"] == "${acc.accounts[0].renewal_date}"
    assert "renewal date" in spec.user.opening
    wrong = edit_call(spec, "tickets_create", lambda a: {**a, "due": "2030-01-01"})
    assert renewal != "2030-01-01" and score(spec, wrong) < 0.75
