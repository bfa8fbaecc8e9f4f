"""TaskSpec models and their file formats."""

from coworkenv.spec.io import SpecError, canonical_json, content_id, load_spec, save_spec, spec_from_data
from coworkenv.spec.models import (
    AnswerStep,
    AskStep,
    CallStep,
    Check,
    ConfirmStep,
    Event,
    Fault,
    Mutation,
    ReferenceStep,
    Rule,
    TaskSpec,
)
from coworkenv.spec.user import UserScript

__all__ = [
    "AnswerStep",
    "AskStep",
    "CallStep",
    "Check",
    "ConfirmStep",
    "Event",
    "Fault",
    "Mutation",
    "ReferenceStep",
    "Rule",
    "SpecError",
    "TaskSpec",
    "UserScript",
    "canonical_json",
    "content_id",
    "load_spec",
    "save_spec",
    "spec_from_data",
]
