"""Contract renewal: update the renewal deal from the proposal document and tell the account owner."""

from __future__ import annotations

from typing import ClassVar

from coworkenv.synth.blueprints.base import Blueprint
from coworkenv.synth.draft import Draft, Fact
from coworkenv.synth.world import World


class ContractRenewal(Blueprint):
    name = "contract_renewal"
    summary = "set the renewal deal's amount and stage from the proposal and email the account owner"
    options: ClassVar[frozenset[str]] = frozenset({"dynamic", "aggregate"})

    def build(self, world: World, options: frozenset[str]) -> Draft:
        rng = world.rng
        owners = [world.person("Sales", title="Account Manager") for _ in range(3)]
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
                world.add(
                    "crm",
                    "deals",
                    {
                        "account_id": acc["id"],
                        "name": f"{company} {year} contract",
                        "stage": "won",
                        "amount": float(rng.randrange(20, 150) * 1000),
                        "close_date": f"{year}-0{rng.randrange(1, 9)}-15",
                        "owner": acc["owner"],
                    },
                )
        assert target is not None
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
        proposal = world.add(
            "documents",
            "documents",
            {
                "path": f"/Sales/Proposals/{company} renewal",
                "title": f"{company} renewal proposal",
                "updated": world.day(-2),
                "content": f"Renewal proposal for {company}. Term: {years} year(s). Annual fee: {new_amount:.0f} USD.",
            },
        )
        world.add(
            "documents",
            "documents",
            {
                "path": f"/Sales/Proposals/{company} 2024 proposal",
                "title": f"{company} 2024 proposal",
                "updated": world.day(-300),
                "content": f"Proposal for {company}. Annual fee: {target['arr']:.0f} USD.",
            },
        )
        amount_text = f"{new_amount:.0f}"
        draft = Draft(
            blueprint=self.name,
            title=f"Renew {company}",
            persona=world.persona(),
            context=world.context(),
            fixtures=world.fixtures,
            openings=[
                "The {company} contract renews on {renew}. Update their renewal deal with the annual fee from the "
                "renewal proposal document, move it to negotiation, and email the account owner that it is ready "
                "for signature.",
                "{company} is up for renewal ({renew}). Take the fee from the renewal proposal doc, put it on the "
                "renewal deal in the CRM, set the stage to negotiation, and let the account's owner know by email.",
                "Renewal time for {company} (due {renew}): move their renewal deal to negotiation at the annual fee "
                "in the renewal proposal document, then email whoever owns the account that it is ready to sign.",
            ],
            facts={
                "company": Fact("company", company, company, ["company"], "", "", withholdable=False),
                "renew": Fact("renew", renew, renew, ["renew"], "", "", withholdable=False),
            },
            reference=[
                {"call": "crm_search_accounts", "args": {"query": company}, "save_as": "acc"},
                {
                    "call": "crm_list_deals",
                    "args": {"account_id": "${acc.accounts[0].id}", "stage": "proposal"},
                    "save_as": "deals",
                },
                {"call": "documents_search", "args": {"query": f"{company} renewal proposal"}, "save_as": "doc"},
                {"call": "documents_read", "args": {"document_id": "${doc.documents[0].id}"}},
                {
                    "call": "crm_update_deal",
                    "_main": True,
                    "args": {"deal_id": "${deals.deals[0].id}", "stage": "negotiation", "amount": new_amount},
                },
            ],
            checks=[],
            capabilities=set(self.capabilities),
            readable=[("documents", "documents", proposal["id"], "content")],
            summary=[company, amount_text],
        )
        ref = draft.reference
        owner = target["owner"]
        if "dynamic" in options:
            owner = world.person("Sales", title="Account Manager").email
            draft.events.append(
                {
                    "id": "owner-change",
                    "on_tool": "crm_update_deal",
                    "notify": f"CRM update: the {company} account has a new owner.",
                    "mutations": [
                        {
                            "service": "crm",
                            "collection": "accounts",
                            "op": "update",
                            "id": target["id"],
                            "record": {"owner": owner},
                        }
                    ],
                }
            )
            ref.append(
                {
                    "call": "crm_get_account",
                    "args": {"account_id": "${acc.accounts[0].id}"},
                    "save_as": "fresh",
                    "say": "The account changed hands; checking who owns it now.",
                }
            )
            owner_ref = "${fresh.owner}"
        else:
            owner_ref = "${acc.accounts[0].owner}"
        ref.append(
            {
                "call": "mail_send",
                "args": {
                    "to": [owner_ref],
                    "subject": f"{company} renewal ready for signature",
                    "body": f"The {company} renewal is in negotiation at {amount_text} USD per year "
                    f"({years} year term).",
                },
            }
        )
        answer = f"The {company} renewal deal is now in negotiation at {amount_text} USD and I emailed {owner_ref}."
        if "aggregate" in options:
            ref.append(
                {"call": "crm_list_deals", "args": {"account_id": target["id"], "stage": "won"}, "save_as": "won"}
            )
            won = sum(
                d["amount"]
                for d in world.fixtures["crm"]["deals"]
                if d["account_id"] == target["id"] and d["stage"] == "won"
            )
            answer += " Their won deals so far total ${sum(won.deals[*].amount)} USD."
            draft.ask_figure("Also tell me how much we have won with them so far.", "won_told", won, 0.01)
        ref.append({"answer": answer})
        world.ensure("mail", "messages")
        draft.check(
            "field_equals",
            "amount",
            2.0,
            service="crm",
            collection="deals",
            record_id=deal["id"],
            field="amount",
            value=new_amount,
        )
        draft.check(
            "field_equals",
            "stage",
            1.5,
            service="crm",
            collection="deals",
            record_id=deal["id"],
            field="stage",
            value="negotiation",
        )
        draft.check(
            "record_exists",
            "owner_told",
            2.0,
            service="mail",
            collection="messages",
            where=f"'{owner}' in r.to and contains(r.body, '{amount_text}')",
            **({"_group": "event"} if draft.events else {}),
        )
        draft.check("unchanged", "deals_guard", 2.0, service="crm", collection="deals", allow=f"r.id == '{deal['id']}'")
        draft.check("answer_contains", "told_amount", 1.0, values=[amount_text])
        return draft
