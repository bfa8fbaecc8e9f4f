"""The exact field checks (``services/arguments.py``) that let a write skip pydantic: every check is one
function with its type test, bounds or after-validator inlined, ``None`` allowed in the same function for an
optional field. A check that passes a value must mean pydantic keeps that very value; each test tries values
that would make a check pass what the model refuses or rewrites."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from coworkenv.services.arguments import _field_check, _record_plan, compiled
from coworkenv.services.base import Email, IsoDate, IsoDateTime
from coworkenv.services.registry import SERVICES

PROBES: list[Any] = [
    None, True, False, 0, 1, -1, 50, 51, 2.0, -0.5, 1e308, "", "x", "2025-03-11", "2025-3-11", "2025-03-11T09:00",
    "2025-03-11 09:00", "a@corp.io", "a@@corp.io", "a b@corp.io", "open", "draft", "viewer", [], ["a"], [1], {},
]  # fmt: skip


def _kept_by_model(model: type[BaseModel], name: str, value: Any) -> bool:
    """Whether validating ``{name: value}`` alone keeps the value exactly (other fields' errors aside)."""
    adapter = model.__pydantic_validator__
    try:
        out = adapter.validate_assignment(model.model_construct(), name, value)
    except ValidationError:
        return False
    kept = getattr(out, name)
    return type(kept) is type(value) and kept == value


def test_a_passing_value_is_what_every_record_model_keeps() -> None:
    checked = 0
    for cls in SERVICES.values():
        for model in cls.records.values():
            if _record_plan(model) is None:  # validators of its own: every write goes to the model
                continue
            for name, info in model.model_fields.items():
                check = _field_check(info)
                if check is None:
                    continue
                for value in PROBES:
                    passes = type(value) in check if isinstance(check, frozenset) else check(value)
                    if passes:
                        checked += 1
                        assert _kept_by_model(model, name, value), (model.__name__, name, value)
    assert checked > 100


class Shapes(BaseModel):
    """One field of each shape a check inlines, optional and not."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    page: Annotated[int, Field(ge=1, le=50)] = 1
    maybe_page: Annotated[int, Field(ge=1, le=50)] | None = None
    ratio: Annotated[float, Field(gt=0)] = 1.0
    day: IsoDate = "2025-01-01"
    maybe_day: IsoDate | None = None
    when: IsoDateTime = "2025-01-01T09:00"
    who: Email = "a@corp.io"
    maybe_who: Email | None = None
    shouted: Annotated[str, AfterValidator(lambda v: v), AfterValidator(lambda v: v.upper())] = "X"
    kind: Literal["open", "draft"] = "open"
    maybe_kind: Literal["open", "draft"] | None = None
    tags: list[str] = []
    maybe_tags: list[str] | None = None


def test_each_inlined_shape_passes_only_what_pydantic_keeps() -> None:
    judged = {name for name, info in Shapes.model_fields.items() if _field_check(info) is not None}
    assert judged >= {"page", "ratio", "day", "when", "who", "maybe_who", "kind", "maybe_kind", "tags", "maybe_tags"}
    for name in judged:
        check = _field_check(Shapes.model_fields[name])
        for value in PROBES:
            passes = type(value) in check if isinstance(check, frozenset) else check(value)
            kept = _kept_by_model(Shapes, name, value)
            assert passes == kept or (not passes and kept and _rewritten_by_nothing(name, value)), (name, value)


def _rewritten_by_nothing(name: str, value: Any) -> bool:
    """A value the model keeps that the table leaves to the model anyway (it may, never must, pass)."""
    return name == "shouted"  # two after-validators: the second must run to know, the table does not guess


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    page: Annotated[int, Field(ge=1, le=50)] = 1
    day: IsoDate = "2025-01-01"
    who: Email = "a@corp.io"
    maybe_who: Email | None = None
    kind: Literal["open", "draft"] = "open"


def test_the_argument_table_uses_the_same_checks() -> None:
    table = compiled(Args)
    assert table.fast({"page": 3, "day": "2025-03-11", "maybe_who": None}) == {
        "page": 3,
        "day": "2025-03-11",
        "maybe_who": None,
    }
    for bad in ({"page": 0}, {"page": True}, {"day": "2025-3-1"}, {"who": "nobody"}, {"kind": "closed"}, {"x": 1}):
        assert table.fast(bad) is None, bad
