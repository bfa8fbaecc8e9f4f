"""Typed step templates of composed workflows, by kind (see :mod:`coworkenv.synth.steps.base`)."""

from coworkenv.synth.steps import calendar, documents, drive, expenses, invoices, leave, people, support
from coworkenv.synth.steps.act import ACT as ACCOUNT_ACT
from coworkenv.synth.steps.base import Binding, Chain, Step
from coworkenv.synth.steps.derive import DERIVE
from coworkenv.synth.steps.locate import LOCATE as ACCOUNT_LOCATE
from coworkenv.synth.steps.notify import NOTIFY as ACCOUNT_NOTIFY
from coworkenv.synth.steps.read import READ as ACCOUNT_READ
from coworkenv.synth.steps.report import REPORT

FAMILIES = (invoices, expenses, leave, people, documents, drive, calendar, support)
"""The step modules of entity families beyond CRM accounts, each with its own locate, read and act steps."""
LOCATE: tuple[Step, ...] = (*ACCOUNT_LOCATE, *(s for f in FAMILIES for s in f.LOCATE))
READ: tuple[Step, ...] = (*ACCOUNT_READ, *(s for f in FAMILIES for s in f.READ))
ACT: tuple[Step, ...] = (*ACCOUNT_ACT, *(s for f in FAMILIES for s in f.ACT))
START: tuple[Step, ...] = tuple(s for f in FAMILIES for s in f.START)
"""Acts that need nothing bound: a workflow may start with one (then it may run two steps, the act and the report)."""
NOTIFY: tuple[Step, ...] = (*ACCOUNT_NOTIFY, *people.NOTIFY)
STEPS: dict[str, Step] = {s.name: s for s in (*LOCATE, *START, *READ, *DERIVE, *ACT, *NOTIFY, REPORT)}

__all__ = ["ACT", "DERIVE", "LOCATE", "NOTIFY", "READ", "REPORT", "START", "STEPS", "Binding", "Chain", "Step"]
