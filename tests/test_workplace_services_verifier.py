"""The verifier over the payments, HR and drive services: their collateral writes are probed, and a
payment task that leaves the invoices unguarded is rejected for exactly that."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from coworkenv.agents import OracleTeacher
from coworkenv.runtime import AssistantTurn, Environment, ToolCall, run_episode
from coworkenv.spec import load_spec, spec_from_data
from coworkenv.verify import perturb, verify
from coworkenv.verify.perturb import collateral_steps
from coworkenv.verify.probe_base import scripted

ROOT = Path(__file__).parent.parent
BROKEN = ROOT / "tests" / "broken_specs" / "payment_invoices_unguarded.yaml"


def _guarded() -> dict:
    """The broken spec with its guard moved onto the invoices (the one the task pays may change)."""
    data = yaml.safe_load(BROKEN.read_text())
    data["checks"][1].update(collection="invoices", allow="r.id == 'inv-1'")
    return data


def test_guarding_the_invoices_gets_the_payment_task_admitted() -> None:
    report = verify(spec_from_data(_guarded()))
    assert report.admitted, [f.line() for f in report.findings]
    assert report.probe_scores["collateral_write"] < 0.75


def test_without_the_invoice_damage_the_unguarded_task_would_be_admitted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe entry for payments.invoices is what catches the defect (the test fails if it goes)."""
    damage = {k: v for k, v in perturb.DAMAGE.items() if k != ("payments", "invoices")}
    monkeypatch.setattr(perturb, "DAMAGE", damage)
    assert verify(load_spec(BROKEN)).admitted


@pytest.mark.parametrize(
    ("example", "call", "target"),
    [
        ("ap_invoice_match_and_pay", "payments_reject_invoice", {"invoice_id": "inv-104"}),
        ("oncall_trade_for_leave", "hr_cancel_leave", {"request_id": "lv-02"}),
        ("drive_offboard_agency", "drive_share", {"item_id": "fld-02", "person": "lucas.moreau@northwind.io"}),
    ],
)
def test_collateral_write_damages_a_record_the_task_is_not_about(example: str, call: str, target: dict) -> None:
    spec = load_spec(ROOT / "examples" / f"{example}.yaml")
    steps = {s.call: s.args for s in collateral_steps(spec)}
    assert call in steps and target.items() <= steps[call].items()
    env = Environment(spec)
    env.reset()
    before = env.workspace.state_hash()
    env.step(AssistantTurn(tool_calls=[ToolCall(id="c1", name=call, arguments=steps[call])]))
    assert env.trajectory().calls[-1].ok and env.workspace.state_hash() != before  # the damage really happens


def test_an_agent_that_pays_without_approval_gets_an_error_and_fails() -> None:
    """Skipping the approval: the payment is refused, nothing is paid, the task is not passed."""
    spec = load_spec(ROOT / "examples" / "ap_invoice_match_and_pay.yaml")
    skipped = [s for s in spec.reference if getattr(s, "call", None) != "payments_approve_invoice"]
    run = run_episode(Environment(spec), scripted(spec, skipped))
    assert run.grade is not None and run.grade.score < 0.75
    pay = next(c for c in run.calls if c.tool == "payments_pay_invoice")
    assert not pay.ok and "must be approved first" in str(pay.error)
    assert run_episode(Environment(spec), OracleTeacher()).grade.score == 1.0
