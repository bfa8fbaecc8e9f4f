"""Vendor dispute: the newer invoice is the duplicate; the credit note exists only in the vendor's reply."""

from __future__ import annotations

from blueprint_cases import BlueprintCases, build

from coworkenv.synth.blueprints import HELD_OUT


class TestVendorDispute(BlueprintCases):
    name = "vendor_dispute"

    def test_the_newer_invoice_is_disputed(self) -> None:
        draft = build(self.name)
        invoices = [
            m for m in draft.fixtures["mail"]["messages"] if "Amount due" in m["body"] and "order PO-" in m["body"]
        ]
        dup = draft.summary[0]
        newest = max((m for m in invoices if m["subject"].startswith("Invoice INV-")), key=lambda m: m["date"])
        assert dup in newest["subject"]
        assert next(c for c in draft.checks if c.id == "disputed").where.count(dup) == 1

    def test_the_credit_note_comes_only_with_the_reply(self) -> None:
        draft = build(self.name, seed=4)
        (stage,) = draft.stages
        note = next(c for c in stage.checks if c.kind == "answer_contains").values[0]
        (reply,) = stage.mutations
        assert note in reply["record"]["body"] and note not in repr(draft.fixtures)
        assert stage.context == "conversation"

    def test_it_is_held_out(self) -> None:
        assert self.name in HELD_OUT
