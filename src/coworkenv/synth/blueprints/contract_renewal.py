"""Contract renewal: update the renewal deal from the proposal document and tell the account owner."""

from __future__ import annotations

from typing import Any, ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, stated
from coworkenv.synth.expr_builder import field
from coworkenv.synth.world import Person, World

OPENINGS = [
    "The {company} contract renews on {renew}. Update their renewal deal with the annual fee from the "
    "renewal proposal document, move it to negotiation, and email the account owner that it is ready "
    "for signature.",
    "{company} is up for renewal ({renew}). Take the fee from the renewal proposal doc, put it on the "
    "renewal deal in the CRM, set the stage to negotiation, and let the account's owner know by email.",
    "Renewal time for {company} (due {renew}): move their renewal deal to negotiation at the annual fee "
    "in the renewal proposal document, then email whoever owns the account that it is ready to sign.",
]


class ContractRenewal(Blueprint):
    name = "contract_renewal"
    summary = "set the renewal deal's amount and stage from the proposal and email the account owner"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        target = _accounts(world, [world.person("Sales", title="Account Manager") for _ in range(3)])
        company, renew = target["name"], target["renewal_date"]
        deal = world.add(
            "crm",
            "deals",
            {
                "account_id": target["id"],
                "name": f"{company} renewal",
                "stage": "proposal",
                "amount": target["arr"],
                "close_date": renew,
                "owner": target["owner"],
            },
        )
        new_amount = float(round(target["arr"] * rng.uniform(1.03, 1.25), -2))
        years = rng.choice((1, 2, 3))
        proposal = _proposals(world, target, new_amount, years)
        amount_text = f"{new_amount:.0f}"
        draft = _draft(self, world, company, renew, proposal)
        draft.summary = [company, amount_text]
        _update_deal(draft, company, new_amount)
        owner, owner_ref = target["owner"], "${acc.accounts[0].owner}"
        if "dynamic" in options:
            owner, owner_ref = _owner_changes(draft, world, target)
        body = f"The {company} renewal is in negotiation at {amount_text} USD per year ({years} year term)."
        mail = {"to": [owner_ref], "subject": f"{company} renewal ready for signature", "body": body}
        draft.reference.call("mail_send", mail)
        answer = f"The {company} renewal deal is now in negotiation at {amount_text} USD and I emailed {owner_ref}."
        if "aggregate" in options:
            answer += _won_so_far(draft, world, target["id"])
        draft.reference.answer(answer)
        world.ensure("mail", "messages")
        _checks(draft, deal["id"], new_amount, owner, amount_text)
        return draft


def _accounts(world: World, owners: list[Person]) -> dict[str, Any]:
    """Three or four accounts with two won contracts each; returns the first (the one renewing)."""
    rng = world.rng
    target = None
    for _ in range(rng.randrange(3, 5)):
        company, _ = world.customer()
        acc = world.add(
            "crm",
            "accounts",
            {
                "name": company,
                "industry": world.fake.word().title(),
                "tier": rng.choice(("standard", "enterprise")),
                "owner": rng.choice(owners).email,
                "renewal_date": world.day(rng.randrange(10, 60)),
                "arr": float(rng.randrange(20, 150) * 1000),
            },
        )
        target = target or acc
        for year in (2023, 2024):
            deal = {"account_id": acc["id"], "name": f"{company} {year} contract", "stage": "won"}
            amount = float(rng.randrange(20, 150) * 1000)
            close = f"{year}-0{rng.randrange(1, 9)}-15"
            world.add("crm", "deals", {**deal, "amount": amount, "close_date": close, "owner": acc["owner"]})
    assert target is not None
    return target


def _proposals(world: World, target: dict[str, Any], amount: float, years: int) -> dict[str, Any]:
    """The renewal proposal (returned) and last year's, with the old fee."""
    company = target["name"]
    content = f"Renewal proposal for {company}. Term: {years} year(s). Annual fee: {amount:.0f} USD."
    doc = {"path": f"/Sales/Proposals/{company} renewal", "title": f"{company} renewal proposal"}
    proposal = world.add("documents", "documents", {**doc, "updated": world.day(-2), "content": content})
    old = {"path": f"/Sales/Proposals/{company} 2024 proposal", "title": f"{company} 2024 proposal"}
    content = f"Proposal for {company}. Annual fee: {target['arr']:.0f} USD."
    world.add("documents", "documents", {**old, "updated": world.day(-300), "content": content})
    return proposal


def _draft(bp: Blueprint, world: World, company: str, renew: str, proposal: dict[str, Any]) -> Draft:
    facts = {
        "company": stated("company", company),
        "renew": stated("renew", renew),
    }
    readable = [("documents", "documents", proposal["id"], "content")]
    return Draft.start(bp.name, f"Renew {company}", world, OPENINGS, facts, set(bp.capabilities), readable)


def _update_deal(draft: Draft, company: str, amount: float) -> None:
    """Find the account's open renewal deal and the proposal, then move the deal on at the new fee."""
    ref = draft.reference
    ref.call("crm_search_accounts", {"query": company}, save_as="acc")
    ref.call("crm_list_deals", {"account_id": "${acc.accounts[0].id}", "stage": "proposal"}, save_as="deals")
    ref.call("documents_search", {"query": f"{company} renewal proposal"}, save_as="doc")
    ref.call("documents_read", {"document_id": "${doc.documents[0].id}"})
    update = {"deal_id": "${deals.deals[0].id}", "stage": "negotiation", "amount": amount}
    ref.call("crm_update_deal", update, role="main")


def _owner_changes(draft: Draft, world: World, target: dict[str, Any]) -> tuple[str, str]:
    """The ``dynamic`` option: the account changes owner as the deal is updated; returns (owner, reference text)."""
    owner = world.person("Sales", title="Account Manager").email
    account = {"service": "crm", "collection": "accounts", "id": target["id"]}
    change = {**account, "op": "update", "record": {"owner": owner}}
    notice = f"CRM update: the {target['name']} account has a new owner."
    draft.events.append({"id": "owner-change", "on_tool": "crm_update_deal", "notify": notice, "mutations": [change]})
    say = "The account changed hands; checking who owns it now."
    draft.reference.call("crm_get_account", {"account_id": "${acc.accounts[0].id}"}, save_as="fresh", say=say)
    return owner, "${fresh.owner}"


def _won_so_far(draft: Draft, world: World, account: str) -> str:
    """The ``aggregate`` option: the total of the account's won deals."""
    draft.reference.call("crm_list_deals", {"account_id": account, "stage": "won"}, save_as="won")
    deals = world.fixtures["crm"]["deals"]
    won = sum(d["amount"] for d in deals if d["account_id"] == account and d["stage"] == "won")
    draft.ask_figure("Also tell me how much we have won with them so far.", "won_told", won, 0.01)
    return " Their won deals so far total ${sum(won.deals[*].amount)} USD."


def _checks(draft: Draft, deal: str, amount: float, owner: str, amount_text: str) -> None:
    draft.checks.field_equals("amount", "crm", "deals", deal, "amount", amount, 2.0)
    draft.checks.field_equals("stage", "crm", "deals", deal, "stage", "negotiation", 1.5)
    told = field("to").has(owner) & field("body").contains(amount_text)
    draft.checks.record_exists("owner_told", "mail", "messages", told, 2.0, group="event" if draft.events else None)
    draft.checks.unchanged("deals_guard", "crm", "deals", field("id").eq(deal), 2.0)
    draft.checks.answer_contains("told_amount", [amount_text])
