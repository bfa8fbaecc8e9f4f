"""Purchase order: price the order from the vendor catalog and raise it with procurement at the right priority."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.expr import format_value
from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact, stated
from coworkenv.synth.expr_builder import and_, field, fn, path, template
from coworkenv.synth.world import Person, World, noise_tickets

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
OPENINGS = [
    "Please raise a purchase order for {qty} {item}s from {vendor}. Price it from their catalog, follow "
    "the purchasing rules, and tell me the total.",
    "We need {qty} {item}s from {vendor}. Work out the total from the {vendor} catalog, open the purchase "
    "order the way the purchasing rules say, and let me know the amount.",
    "Order {qty} {item}s from {vendor}, please. Look up the unit price in the {vendor} catalog, raise "
    "the purchase order as the purchasing rules require, and tell me what it comes to.",
]


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
        catalog = _documents(world, vendor, other, prices, item, threshold)
        lead = world.person("Operations", title="Procurement Lead")
        world.contacts(lead, world.person("Operations", title="Office Manager"), extra=2)
        noise_tickets(world, rng.randrange(2, 4), ("procurement", "it", "facilities"))
        draft = _draft(self, world, qty, item, vendor, catalog)
        draft.summary = [format_value(total)]
        _order(draft, vendor, item, prices[item], priority, lead)
        ticket = and_(
            field("team").eq("procurement"),
            field("title").contains(item),
            field("priority").eq(priority),
            field("assignee").eq(lead.email),
            field("description").contains(format_value(total)),
        )
        draft.checks.record_exists("po_ticket", "tickets", "tickets", ticket, 3.0)
        draft.checks.answer_number("told_total", total, 0.01)
        draft.checks.unchanged("tickets_guard", "tickets", "tickets", field("created").eq("now"))
        return draft


def _documents(
    world: World, vendor: str, other: str, prices: dict[str, float], item: str, threshold: float
) -> dict[str, Any]:
    """The vendor's catalog (returned), another vendor's, and the purchasing rules."""
    day = world.day(-20)
    lines = "\n".join(f"{i}: {p:.2f}" for i, p in prices.items())
    doc = {"path": f"/Procurement/Catalog - {vendor}", "title": f"{vendor} catalog", "updated": day}
    catalog = world.add("documents", "documents", {**doc, "content": f"{vendor} price list (USD per unit):\n{lines}"})
    doc = {"path": f"/Procurement/Catalog - {other}", "title": f"{other} catalog", "updated": world.day(-20)}
    content = f"{other} price list (USD per unit):\n{item}: {world.money(40, 900):.2f}"
    world.add("documents", "documents", {**doc, "content": content})
    rules = (
        "Open a ticket for the procurement team for every purchase order, tagged 'purchase-order' "
        f"and assigned to the procurement lead. Orders over {threshold:.0f} USD get priority high, others "
        "medium."
    )
    doc = {"path": "/Procurement/Purchasing rules", "title": "Purchasing rules", "updated": world.day(-200)}
    world.add("documents", "documents", {**doc, "content": rules})
    return catalog


def _draft(bp: Blueprint, world: World, qty: int, item: str, vendor: str, catalog: dict[str, Any]) -> Draft:
    facts = {
        "qty": Fact(
            "qty",
            qty,
            str(qty),
            ["how many", "quantity", "units"],
            "How many units do you need?",
            f"We need {qty} units.",
            withheld="some",
        ),
        "item": stated("item", item),
        "vendor": stated("vendor", vendor),
    }
    readable = [("documents", "documents", catalog["id"], "content")]
    title = f"Purchase order: {qty} x {item}"
    return Draft.start(bp.name, title, world, OPENINGS, facts, set(bp.capabilities), readable)


def _order(draft: Draft, vendor: str, item: str, price: float, priority: str, lead: Person) -> None:
    """Read the catalog and the rules, find the lead, open the ticket; the total is computed from the quantity."""
    cost = template(fn("round", path("facts", "qty") * price, 2))  # as an agent would compute it
    ref = draft.reference
    ref.call("documents_search", {"query": f"catalog {vendor}"}, save_as="cat")
    ref.call("documents_read", {"document_id": "${cat.documents[0].id}"})
    ref.call("documents_search", {"query": "purchasing rules"}, save_as="rules")
    ref.call("documents_read", {"document_id": "${rules.documents[0].id}"})
    ref.call("contacts_search", {"query": "procurement lead"}, save_as="lead")
    ticket = {
        "title": f"PO: ${{facts.qty}} x {item} from {vendor}",
        "team": "procurement",
        "priority": priority,
        "assignee": "${lead.contacts[0].email}",
        "description": f"Order ${{facts.qty}} {item} at {price:.2f} USD each. Total {cost} USD.",
        "tags": ["purchase-order"],
    }
    ref.call("tickets_create", ticket, role="main")
    ref.answer(
        f"Opened the purchase order for ${{facts.qty}} {item}s from {vendor}: total {cost} "
        f"USD, priority {priority}, assigned to {lead.name}."
    )
