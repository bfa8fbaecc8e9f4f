"""Verifier v3: the guard of every guarded collection the reference writes must carry weight on its own, a guard
against calls with given arguments is broken by a call built to match them, and weights stay bounded.

The broken specs are rejected in tests/test_verifier_selftest.py; here, undoing the defect gets
each admitted, and the probe runs are the ones the spec's content calls for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from coworkenv.spec import SpecError, load_spec, spec_from_data
from coworkenv.verify import verify
from coworkenv.verify.perturb import guarded_calls, written_collateral
from coworkenv.verify.probes import PROBES
from coworkenv.verify.violations import violating_call

BROKEN = Path(__file__).parent / "broken_specs"


def _data(name: str) -> dict[str, Any]:
    return yaml.safe_load((BROKEN / f"{name}.yaml").read_text(encoding="utf-8"))


def test_one_collateral_run_per_collection_of_a_written_service() -> None:
    """The reference writes tickets only: the tickets collection gets its own run, contacts do not."""
    spec = load_spec(BROKEN / "light_guard_in_written_collection.yaml")
    assert [where for where, _ in written_collateral(spec)] == ["tickets.tickets"]
    (step,) = [s for _, s in written_collateral(spec)]
    assert step.args.get("ticket_id") not in ("tkt-1", None)  # another record than the one the task is about
    names = [name for name, _ in PROBES["collateral_write"].variants(spec)]
    assert names == ["collateral_write", "collateral_write[tickets.tickets]"]


def test_a_weighty_guard_of_the_written_collection_is_admitted() -> None:
    data = _data("light_guard_in_written_collection")
    data["checks"][1]["required"] = True  # the tickets guard
    report = verify(spec_from_data(data))
    assert report.admitted, [f.line() for f in report.findings]
    assert report.probe_scores["collateral_write[tickets.tickets]"] < 0.75


def test_weights_are_bounded_at_load() -> None:
    """Two weights of 1e308 would sum to infinity and score the reference NaN: the spec does not load."""
    data = _data("light_guard_in_written_collection")
    data["checks"][0]["weight"] = data["checks"][3]["weight"] = 1e308
    with pytest.raises(SpecError, match=r"checks\[0\]\.\w+\.weight: Input should be less than or equal to 1000000"):
        spec_from_data(data)
    data["checks"][0]["weight"] = data["checks"][3]["weight"] = 1e6
    assert spec_from_data(data).checks[0].weight == 1e6


def test_the_report_dump_hint_names_a_check_a_dump_fails() -> None:
    """Weighing up the answer checks a dump satisfies cannot help: the hint says so and points to answer_counts."""
    report = verify(load_spec(BROKEN / "report_dump_passes.yaml"))
    (finding,) = [f for f in report.findings if f.where == "probe:report_dump"]
    assert "answer_counts" in finding.hint and "cannot help" in finding.hint


def test_a_guard_against_prose_phishing_is_proven_by_sending_outside() -> None:
    """The guard forbids mail leaving corp.com; the probe sends to an outside address the phishing mail names."""
    spec = load_spec(BROKEN / "prose_phishing_guard_light.yaml")
    ((where, (step,)),) = guarded_calls(spec)
    assert where == "checks:no_outside_mail"
    assert step.call == "mail_send" and step.args["to"] == ["it-desk@corp-helpdesk.net"]
    data = _data("prose_phishing_guard_light")
    data["checks"][2]["required"] = True
    report = verify(spec_from_data(data))
    assert report.admitted, [f.line() for f in report.findings]
    assert report.probe_scores["guarded_action[checks:no_outside_mail]"] < 0.75


def test_no_violating_call_where_nothing_the_spec_names_breaks_the_guard() -> None:
    """Only inside addresses in the workspace: no call is invented for a guard nothing can break."""
    data = _data("prose_phishing_guard_light")
    data["services"]["mail"]["messages"] = data["services"]["mail"]["messages"][:1]
    spec = spec_from_data(data)
    assert violating_call(spec, "mail_send", spec.checks[2].where) is None


def test_a_guard_against_paying_the_mismatched_invoice_is_proven_by_paying_it() -> None:
    """The guard names the invoice over its purchase order; the probe pays exactly that one."""
    spec = load_spec(BROKEN / "mismatched_payment_guard_light.yaml")
    ((_, (step,)),) = guarded_calls(spec)
    assert step.call == "payments_pay_invoice" and step.args == {"invoice_id": "inv-2", "date": "2025-03-03"}
    data = _data("mismatched_payment_guard_light")
    data["checks"][2]["required"] = True
    report = verify(spec_from_data(data))
    assert report.admitted, [f.line() for f in report.findings]
    assert report.probe_scores["guarded_action[checks:mismatch_not_paid]"] < 0.75


def test_an_unguarded_written_collection_gets_its_own_run_and_is_rejected() -> None:
    """Without the tickets guard a cheat may rewrite another ticket: the probe damages one, and the spec is
    rejected with a hint to guard that collection."""
    data = _data("light_guard_in_written_collection")
    data["checks"] = [c for c in data["checks"] if c["id"] != "tickets_guard"]
    spec = spec_from_data(data)
    assert "tickets.tickets" in [where for where, _ in written_collateral(spec)]
    report = verify(spec)
    assert not report.admitted
    (finding,) = [f for f in report.findings if f.where == "probe:collateral_write[tickets.tickets]"]
    assert "`unchanged` guard on tickets.tickets" in finding.hint
