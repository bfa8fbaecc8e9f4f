"""The workflow blueprints, one module each, and the default held-out set.

HELD_OUT names the blueprints whose environments form the held-out evaluation split
(unseen workflows). They are chosen to cover different services and all offer the
generic multi_turn modifiers, like every blueprint, so both splits exercise multi_turn;
one multi-day workflow (vendor_dispute) is held out, so both splits have multi-day tasks.
Every tool a held-out workflow calls is called by some training workflow: the split tests new
workflows, not tools no demo ever used (a model cannot learn a tool it never saw called).
"""

from __future__ import annotations

from coworkenv.synth.blueprints import (
    access_request,
    contract_renewal,
    customer_followup,
    expense_report,
    hiring_loop,
    inbox_triage,
    incident_communication,
    incident_postmortem,
    interview_scheduling,
    invoice_reconciliation,
    leave_request,
    meeting_scheduling,
    month_end_close,
    notes_to_tickets,
    onboarding,
    purchase_order,
    ticket_escalation,
    travel_request,
    vendor_dispute,
    weekly_report,
)
from coworkenv.synth.blueprints.base import OPTIONS, Blueprint

BLUEPRINTS: dict[str, Blueprint] = {
    cls.name: cls()
    for cls in (
        meeting_scheduling.MeetingScheduling,
        expense_report.ExpenseReport,
        ticket_escalation.TicketEscalation,
        customer_followup.CustomerFollowUp,
        onboarding.Onboarding,
        invoice_reconciliation.InvoiceReconciliation,
        notes_to_tickets.NotesToTickets,
        travel_request.TravelRequest,
        contract_renewal.ContractRenewal,
        inbox_triage.InboxTriage,
        weekly_report.WeeklyReport,
        access_request.AccessRequest,
        incident_communication.IncidentCommunication,
        interview_scheduling.InterviewScheduling,
        leave_request.LeaveRequest,
        purchase_order.PurchaseOrder,
        incident_postmortem.IncidentPostmortem,
        vendor_dispute.VendorDispute,
        hiring_loop.HiringLoop,
        month_end_close.MonthEndClose,
    )
}
HELD_OUT: tuple[str, ...] = (
    "interview_scheduling",
    "incident_communication",
    "travel_request",
    "purchase_order",
    "vendor_dispute",
)


def blueprint(name: str) -> Blueprint:
    try:
        return BLUEPRINTS[name]
    except KeyError:
        raise KeyError(f"unknown blueprint {name!r}; known: {', '.join(BLUEPRINTS)}") from None


__all__ = ["BLUEPRINTS", "HELD_OUT", "OPTIONS", "Blueprint", "blueprint"]
