"""A write's record built from the changes alone must equal validating the whole changed record.

``changed_record`` skips validating the record a tool changed when every change passes its field's exact check;
these tests try values pydantic would coerce, reject or copy, on every record model of the example workspaces."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError, field_validator

from coworkenv.runtime import Workspace
from coworkenv.services.arguments import changed_record
from coworkenv.services.base import ToolError
from coworkenv.services.registry import service_class
from coworkenv.spec import load_spec

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.yaml"))
RECORDS = [
    (service, coll, rec)
    for path in EXAMPLES
    for service, colls in Workspace(load_spec(path).services).initial.items()
    for coll, recs in colls.items()
    for rec in list(recs.values())[:2]
]
ODD = [1, 0, True, False, 1.0, 2.5, math.inf, None, "", "x", "2025-03-10", ["a"], [1], [None], {}, {"a": 1}, "open"]


def full(service: str, coll: str, old: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any] | None:
    """What validating the whole changed record gives (None: the model rejects it)."""
    try:
        return service_class(service, None).validate_record(coll, {**old, **changes})
    except ValidationError:
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pick=st.integers(0, 10**6), picks=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), max_size=3))
def test_changes_equal_full_validation(pick: int, picks: list[tuple[int, int]]) -> None:
    service, coll, old = RECORDS[pick % len(RECORDS)]
    fields = [*old, "no_such_field"]
    peers = [r for s, c, r in RECORDS if (s, c) == (service, coll)]
    changes: dict[str, Any] = {}
    for f, v in picks:  # a value another record has, or one of the odd ones
        field = fields[f % len(fields)]
        pool = [p[field] for p in peers if field in p] + ODD
        changes[field] = pool[v % len(pool)]
    model = service_class(service, None).records[coll]
    fast = changed_record(model, old, changes)
    if fast is not None:
        expected = full(service, coll, old, changes)
        assert fast == expected and list(fast) == list(expected)  # same values, same key order


@pytest.mark.parametrize(
    ("changes", "judged"),
    [
        ({"folder": "archive"}, True),
        ({"unread": False}, True),
        ({"unread": 1}, False),  # pydantic would coerce 1 to True
        ({"labels": ["a", "b"]}, True),
        ({"labels": ["a", 1]}, False),
        ({"folder": None}, False),  # a required text
        ({"nonsense": 1}, False),  # extra fields are the model's to reject
    ],
)
def test_which_changes_are_judged(changes: dict[str, Any], judged: bool) -> None:
    service, coll, old = next(r for r in RECORDS if r[:2] == ("mail", "messages"))
    model = service_class(service, None).records[coll]
    fast = changed_record(model, old, changes)
    assert (fast is not None) == judged
    if fast is not None:
        assert fast == full(service, coll, old, changes)


def test_a_list_change_is_copied() -> None:
    service, coll, old = next(r for r in RECORDS if r[:2] == ("mail", "messages"))
    labels = ["a"]
    fast = changed_record(service_class(service, None).records[coll], old, {"labels": labels})
    assert fast is not None and fast["labels"] == labels and fast["labels"] is not labels


def test_a_model_with_validators_always_validates() -> None:
    class Shouting(BaseModel):
        model_config = {"extra": "forbid"}
        name: str

        @field_validator("name")
        @classmethod
        def upper(cls, v: str) -> str:
            return v.upper()

    assert changed_record(Shouting, {"name": "A"}, {"name": "b"}) is None


def test_a_rejected_update_leaves_no_trace() -> None:
    ws = Workspace(load_spec(EXAMPLES[0]).services)
    service, colls = next((s, c) for s, c in ws.initial.items() if c)
    coll, recs = next((c, r) for c, r in colls.items() if r)
    rid = next(iter(recs))
    with pytest.raises(ToolError):
        ws.services[service].update(coll, rid, {"id": 5})
    assert ws.state == ws.initial and not ws.changes
