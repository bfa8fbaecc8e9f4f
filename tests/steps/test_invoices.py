"""Invoice steps: the invoice of the vendor named (not the namesake's), approved, paid once, rejected, recorded."""

from __future__ import annotations

import pytest
from step_cases import admitted, edit_call, records, score, twice, without

CHAINS = {
    "payments_approve_invoice": ("locate_invoice", "read_invoice", "act_approve_invoice", "notify_channel", "report"),
    "payments_pay_invoice": (
        "locate_invoice",
        "act_approve_invoice",
        "act_pay_invoice",
        "notify_topic_channel",
        "report",
    ),
    "payments_reject_invoice": ("locate_invoice", "read_vendor", "act_reject_invoice", "notify_channel", "report"),
    "payments_record_invoice": ("locate_invoice", "act_record_invoice", "notify_channel", "report"),
    "payments_create_purchase_order": ("locate_invoice", "read_payments", "act_create_po", "notify_channel", "report"),
}


@pytest.mark.parametrize("tool", sorted(CHAINS))
def test_the_write_is_checked_and_skipping_it_fails(tool: str) -> None:
    spec = admitted(21, *CHAINS[tool])
    assert score(spec) == 1.0
    assert score(spec, without(spec, tool)) < 0.75


def test_the_namesake_invoice_of_another_vendor_is_a_look_alike() -> None:
    spec = admitted(22, *CHAINS["payments_approve_invoice"])
    invoices = records(spec, "payments", "invoices")
    target = next(i for i in invoices if i.get("status", "received") == "received" and i["vendor_id"] == "ven-1")
    namesake = next(i for i in invoices if i["vendor_id"] != "ven-1")
    assert namesake["number"] == target["number"]
    wrong = edit_call(spec, "payments_approve_invoice", lambda a: {**a, "invoice_id": namesake["id"]})
    assert score(spec, wrong) < 0.75


def test_paying_twice_is_refused_and_recording_twice_fails() -> None:
    spec = admitted(23, *CHAINS["payments_pay_invoice"])
    assert score(spec, twice(spec, "payments_pay_invoice")) == 1.0  # the service refuses a second payment
    spec = admitted(24, *CHAINS["payments_record_invoice"])
    assert score(spec, twice(spec, "payments_record_invoice")) == 1.0  # a number is recorded once per vendor
    assert len([i for i in records(spec, "payments", "purchase_orders") if i.get("status", "open") == "open"]) == 1


def test_past_payments_are_summed_in_the_report() -> None:
    spec = admitted(25, *CHAINS["payments_create_purchase_order"])
    told = next(c for c in spec.checks if c.id == "told_paid")
    paid = [p["amount"] for p in records(spec, "payments", "payments")]
    assert told.value == pytest.approx(sum(paid)) and len(paid) >= 2  # type: ignore[union-attr]
