"""The steps over a catalogue domain: look-alikes that match all but one of what the request says, and writes
that a careless agent gets wrong."""

from __future__ import annotations

import pytest
from step_cases import PASS, score, without

from coworkenv.bank.diversity import Tally
from coworkenv.spec.models import CallStep, TaskSpec
from coworkenv.synth.domain_records import plant
from coworkenv.synth.domains import catalogue
from coworkenv.synth.draft import finalize
from coworkenv.synth.steps.base import Chain
from coworkenv.synth.steps.domain import DOMAIN_STEPS, domain_of
from coworkenv.synth.world import World
from coworkenv.verify.admission import verify


def chain_of(domain: str, seed: int, *names: str) -> Chain:
    world = World(seed)
    plant(world, catalogue()[domain])
    chain = Chain(world)
    for name in names:
        DOMAIN_STEPS[name].apply(chain)
    return chain


def admitted(domain: str, seed: int, *names: str) -> TaskSpec:
    chain = chain_of(domain, seed, *names, "report_item")
    openings = [" ".join(c[0] for c in chain.clauses).capitalize() + "."]
    spec = finalize(chain.draft("domain:test", "test", openings), seed=seed)
    report = verify(spec)
    assert report.admitted, [(f.kind, f.where, f.evidence) for f in report.findings]
    return spec


def records(chain: Chain) -> list[dict[str, object]]:
    d = domain_of(chain)
    return chain.world.fixtures[d.service][d.collection]


@pytest.mark.parametrize("domain", ["fleet", "okrs", "badges"])
def test_by_attribute_only_the_target_has_both_the_facet_and_the_status(domain: str) -> None:
    for seed in range(10):
        chain = chain_of(domain, seed, "locate_item_by_attribute")
        d, target = domain_of(chain), chain.need("item").record
        both = [r for r in records(chain) if r[d.facet] == target[d.facet] and r[d.status] == target[d.status]]
        assert both == [target]
        assert any(r[d.facet] == target[d.facet] and r is not target for r in records(chain))
        assert any(r[d.status] == target[d.status] and r is not target for r in records(chain))
        assert target[d.status] != d.damage


@pytest.mark.parametrize("domain", ["kb", "travel", "scheduler"])
def test_by_name_another_record_has_the_same_name_elsewhere(domain: str) -> None:
    for seed in range(10):
        chain = chain_of(domain, seed, "locate_item_by_name")
        d, target = domain_of(chain), chain.need("item").record
        same = [r for r in records(chain) if r[d.name] == target[d.name]]
        assert len(same) >= 2 and {r[d.facet] for r in same} != {target[d.facet]}
        call = next(chain.reference.calls())
        assert call["args"] == {"query": target[d.name]}  # the namesake elsewhere is in view


@pytest.mark.parametrize("domain", ["loans", "incidents", "mailroom"])
def test_by_date_only_the_target_falls_in_the_month_in_its_facet(domain: str) -> None:
    for seed in range(10):
        chain = chain_of(domain, seed, "locate_item_by_date")
        d, target = domain_of(chain), chain.need("item").record
        month = chain.facts["month"].value
        hits = [r for r in records(chain) if r[d.facet] == target[d.facet] and str(r[d.date]).startswith(month)]
        assert hits == [target]
        assert sum(r[d.facet] == target[d.facet] for r in records(chain)) >= 4
        assert month in chain.facts["month"].given


def test_reassigning_looks_the_colleague_up_among_namesakes() -> None:
    chain = chain_of("facilities", 4, "locate_item_by_attribute", "act_item_assign")
    name = chain.facts["assignee_name"].value
    first = name.split()[0]
    contacts = chain.world.fixtures["contacts"]["contacts"]
    assert sum(c["name"].split()[0] == first for c in contacts) >= 2
    assert [c["call"] for c in chain.reference.calls()][1:] == ["contacts_search", "facilities_update_room"]


def test_a_status_change_to_the_wrong_value_or_on_a_namesake_colleague_fails() -> None:
    spec = admitted("procurement", 3, "locate_item_by_name", "act_item_status", "act_item_assign")
    assert score(spec) == 1.0
    d = catalogue()["procurement"]
    wrong_status = []
    for step in spec.reference:
        if isinstance(step, CallStep) and step.call == d.tool("update") and d.status in step.args:
            step = step.model_copy(update={"args": {**step.args, d.status: d.damage}})
        wrong_status.append(step)
    assert score(spec, wrong_status) < PASS
    assert score(spec, without(spec, "contacts_search")) < PASS


def test_a_log_entry_on_the_record_then_a_notice_is_admitted_and_each_write_counts() -> None:
    for notify in ("notify_item_channel", "notify_item_mail"):
        spec = admitted("shipments", 5, "locate_item_by_date", "read_item", "act_item_log", notify)
        assert score(spec) == 1.0
        assert score(spec, without(spec, "shipments_add_shipment_event")) < PASS
        tool = "chat_post_message" if notify == "notify_item_channel" else "mail_send"
        assert score(spec, without(spec, tool)) < PASS


def test_the_report_must_name_the_record_by_its_key() -> None:
    spec = admitted("legal", 6, "locate_item_by_attribute", "act_item_status", "notify_item_mail")
    key = next(c for c in spec.checks if c.id == "told_item").model_dump()["values"][0]
    assert key.startswith("M-") and key not in spec.user.opening
    vague = [s for s in spec.reference if not hasattr(s, "answer")]
    assert score(spec, [*vague, {"answer": "Done, all updated."}]) < PASS


def test_the_bank_tally_counts_environments_per_declared_domain() -> None:
    spec = finalize(chain_of("fleet", 3, "locate_item_by_attribute", "report_item").draft("d", "t", ["Go."]), seed=3)
    assert spec.declared_services
    tally = Tally()
    tally.add(spec)
    tally.add(spec)
    assert tally.domains == dict.fromkeys(spec.declared_services, 2)
