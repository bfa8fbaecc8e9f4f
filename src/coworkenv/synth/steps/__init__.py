"""Typed step templates of composed workflows, by kind (see :mod:`coworkenv.synth.steps.base`)."""

from coworkenv.synth.steps.act import ACT
from coworkenv.synth.steps.base import Binding, Chain, Step
from coworkenv.synth.steps.derive import DERIVE
from coworkenv.synth.steps.locate import LOCATE
from coworkenv.synth.steps.notify import NOTIFY
from coworkenv.synth.steps.read import READ
from coworkenv.synth.steps.report import REPORT

STEPS: dict[str, Step] = {s.name: s for s in (*LOCATE, *READ, *DERIVE, *ACT, *NOTIFY, REPORT)}

__all__ = ["ACT", "DERIVE", "LOCATE", "NOTIFY", "READ", "REPORT", "STEPS", "Binding", "Chain", "Step"]
