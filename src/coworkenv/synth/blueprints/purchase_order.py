"""Purchase order: price the order from the vendor catalog and raise it with procurement at the right priority."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.expr import format_value
from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World, noise_tickets

ITEMS = (
    "ergonomic chair",
    "27-inch monitor",
    "standing desk",
    "laptop dock",
    "noise-cancelling headset",
    "conference camera",
    "whiteboard",
    "label printer",
)


class PurchaseOrder(Blueprint):
    name = "purchase_order"
    summary = "compute an order's total from the vendor catalog and open a procurement ticket with the right priority"
    capabilities = ("tool_coordination", "information_synthesis")
    options: ClassVar[frozenset[str]] = frozenset()

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        vendor, _ = world.customer()
        other, _ = world.customer()
        items = rng.sample(ITEMS, 4)
        item = items[0]
        prices = {i: world.money(40, 900) for i in items}
        threshold = float(rng.choice((1000, 2000, 5000)))
        qty = rng.randrange(2, 15)
        total = round(prices[item] * qty, 2)
        priority = "high" if total > threshold else "medium"
        cost = f"${{round(facts.qty * {prices[item]}, 2)}}"  # computed from the quantity, as an agent would
        catalog = world.add(
            "documents",
            "documents",
            {
                "path": f"/Procurement/Catalog - {vendor}",
                "title": f"{vendor} catalog",
                "updated": world.day(-20),
                "content": f"{vendor} price list (USD per unit):\n"
                + "\n".join(f"{i}: {p:.2f}" for i, p in prices.items()),
            },
        )
        world.add(
            "documents",
            "documents",
            {
                "path": f"/Procurement/Catalog - {other}",
                "title": f"{other} catalog",
                "updated": world.day(-20),
                "content": f"{other} price list (USD per unit):\n{item}: {world.money(40, 900):.2f}",
            },
        )
        world.add(
            "documents",
            "documents",
            {
                "path": "/Procurement/Purchasing rules",
                "title": "Purchasing rules",
                "updated": world.day(-200),
                "content": "Open a ticket for the procurement team for every purchase order, tagged 'purchase-order' "
                f"and assigned to the procurement lead. Orders over {threshold:.0f} USD get priority high, others "
                "medium.",
            },
        )
        lead = world.person("Operations", title="Procurement Lead")
        world.contacts(lead, world.person("Operations", title="Office Manager"), extra=2)
        noise_tickets(world, rng.randrange(2, 4), ("procurement", "it", "facilities"))
        draft = Draft(
            blueprint=self.name,
            title=f"Purchase order: {qty} x {item}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "Please raise a purchase order for {qty} {item}s from {vendor}. Price it from their catalog, follow "
                "the purchasing rules, and tell me the total.",
                "We need {qty} {item}s from {vendor}. Work out the total from the {vendor} catalog, open the purchase "
                "order the way the purchasing rules say, and let me know the amount.",
                "Order {qty} {item}s from {vendor}, please. Look up the unit price in the {vendor} catalog, raise "
                "the purchase order as the purchasing rules require, and tell me what it comes to.",
            ],
            facts={
                "qty": Fact(
                    "qty",
                    qty,
                    str(qty),
                    ["how many", "quantity", "units"],
                    "How many units do you need?",
                    f"We need {qty} units.",
                    withheld="some",
                ),
                "item": Fact("item", item, item, ["item"], "", "", withholdable=False),
                "vendor": Fact("vendor", vendor, vendor, ["vendor"], "", "", withholdable=False),
            },
            reference=[
                {"call": "documents_search", "args": {"query": f"catalog {vendor}"}, "save_as": "cat"},
                {"call": "documents_read", "args": {"document_id": "${cat.documents[0].id}"}},
                {"call": "documents_search", "args": {"query": "purchasing rules"}, "save_as": "rules"},
                {"call": "documents_read", "args": {"document_id": "${rules.documents[0].id}"}},
                {"call": "contacts_search", "args": {"query": "procurement lead"}, "save_as": "lead"},
                {
                    "call": "tickets_create",
                    "_main": True,
                    "args": {
                        "title": f"PO: ${{facts.qty}} x {item} from {vendor}",
                        "team": "procurement",
                        "priority": priority,
                        "assignee": "${lead.contacts[0].email}",
                        "description": f"Order ${{facts.qty}} {item} at {prices[item]:.2f} USD each. Total {cost} USD.",
                        "tags": ["purchase-order"],
                    },
                },
                {
                    "answer": f"Opened the purchase order for ${{facts.qty}} {item}s from {vendor}: total {cost} "
                    f"USD, priority {priority}, assigned to {lead.name}."
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("documents", "documents", catalog["id"], "content")],
            summary=[format_value(total)],
        )
        draft.check(
            "record_exists",
            "po_ticket",
            3.0,
            service="tickets",
            collection="tickets",
            where=f"r.team == 'procurement' and contains(r.title, '{item}') and r.priority == '{priority}' "
            f"and r.assignee == '{lead.email}' and contains(r.description, '{format_value(total)}')",
        )
        draft.check("answer_number", "told_total", 2.0, value=total, tolerance=0.01)
        draft.check(
            "unchanged", "tickets_guard", 1.0, service="tickets", collection="tickets", allow="r.created == 'now'"
        )
        return draft
