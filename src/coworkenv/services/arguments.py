"""Tool arguments checked without building the argument model, where the answer is certain.

A tool's pydantic argument model is the authority: its errors are what the agent reads.
But most calls carry plain JSON values that already are what the model would produce (a
text for a ``str``, an in-range integer for a ``Limit``), and building the model for them
was the largest share of a read step. :func:`compiled` turns a tool's model, once, into a
per-field table of exact-type checks. A call whose every argument passes is run with those
very values (a list is copied, as validation copies it); anything else — a wrong or
coercible type (``1`` for a ``bool``, ``2`` for a ``float``), an extra or missing key, a
value out of range — goes to the model, so the result and every error message stay those
of pydantic. A model with a field the table cannot judge exactly (aliases, validators,
other types) always goes to the model.
"""

from __future__ import annotations

import inspect
import operator
import types
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import AfterValidator, BaseModel
from pydantic.fields import FieldInfo

Check = Callable[[object], bool]
_TEXT = {str}
Compare = Callable[[Any, Any], bool]
"""A bound's comparison (``operator.ge`` …), of a number the check has found to be of the field's type."""
_BOUNDS: dict[type, tuple[str, Compare]] = {
    Ge: ("ge", operator.ge),
    Gt: ("gt", operator.gt),
    Le: ("le", operator.le),
    Lt: ("lt", operator.lt),
}


class Fields:
    """Exact checks of a record model's fields, split as :class:`Arguments` splits them: the fields judged by
    type alone (a set of types) and those judged by a function."""

    __slots__ = ("checks", "exact")

    def __init__(self, checks: dict[str, Check | frozenset[type]]) -> None:
        self.exact = {n: c for n, c in checks.items() if isinstance(c, frozenset)}
        self.checks = {n: c for n, c in checks.items() if not isinstance(c, frozenset)}

    def plain(self, values: Mapping[str, object]) -> bool:
        """Whether every value passes its field's exact check (a key with no check fails)."""
        exact = self.exact
        for key, value in values.items():
            kinds = exact.get(key)
            if kinds is None:
                check = self.checks.get(key)
                if check is None or not check(value):
                    return False
            elif type(value) not in kinds:
                return False
        return True


class Arguments(Fields):
    """The exact-type table of one argument model: ``fast(args)`` gives the call's keyword arguments, or None
    when only the model can say (then :meth:`model` validates, raising pydantic's ValidationError)."""

    __slots__ = ("copies", "known", "model", "required")

    def __init__(self, model: type[BaseModel], checks: dict[str, Check | frozenset[type]] | None) -> None:
        super().__init__(checks or {})
        self.model = model
        self.known = checks is not None  # False: every call goes to the model
        self.required = frozenset(n for n, f in model.model_fields.items() if f.is_required())
        self.copies = frozenset(n for n, f in model.model_fields.items() if _is_list(f.annotation))

    def fast(self, args: dict[str, object]) -> dict[str, object] | None:
        if not self.known or not self.plain(args) or not args.keys() >= self.required:
            return None
        if self.copies.isdisjoint(args):
            return args
        return {k: list(v) if k in self.copies and isinstance(v, list) else v for k, v in args.items()}

    def validated(self, args: Mapping[str, object]) -> dict[str, object]:
        """The keyword arguments the model gives (raises ValidationError)."""
        # vars(): the fields as they are (dict(model) probes for .keys() through pydantic's slow __getattr__)
        return vars(self.model.model_validate(args))


@lru_cache(maxsize=1024)
def compiled(model: type[BaseModel]) -> Arguments:
    """The table of ``model``, built once per model class (bounded: declared services make classes per spec)."""
    return Arguments(model, _table(model))


def _table(model: type[BaseModel]) -> dict[str, Check | frozenset[type]] | None:
    if not _plain_model(model):
        return None
    checks: dict[str, Check | frozenset[type]] = {}
    for name, info in model.model_fields.items():
        check = _field_check(info)
        if check is None or _renamed(name, info) or info.default_factory is not None:
            return None
        if not info.is_required() and not isinstance(info.default, str | int | float | bool | type(None)):
            return None  # a mutable default, which the model would copy
        checks[name] = check
    return checks


def _plain_model(model: type[BaseModel]) -> bool:
    """Whether the model does no more than each field's own checks: no config beyond ``extra="forbid"``, no
    validators or post-init of its own."""
    decorators = model.__pydantic_decorators__
    return (
        model.model_config == {"extra": "forbid"}
        and not (decorators.field_validators or decorators.model_validators)
        and model.__pydantic_post_init__ is None
    )


def _renamed(name: str, info: FieldInfo) -> bool:
    return info.alias not in (None, name) or info.validation_alias not in (None, name)


@lru_cache(maxsize=1024)
def _field_table(model: type[BaseModel]) -> Fields:
    """The exact checks of the fields a table can judge (none for a model that is not plain)."""
    if not _plain_model(model):
        return Fields({})
    checks = {name: (_field_check(info), _renamed(name, info)) for name, info in model.model_fields.items()}
    return Fields({name: check for name, (check, renamed) in checks.items() if check is not None and not renamed})


def changed_record(
    model: type[BaseModel], old: Mapping[str, object], changes: Mapping[str, object]
) -> dict[str, object] | None:
    """``old`` (a record as ``model`` validates and dumps it) with ``changes``, as validating and dumping the
    changed record would give it, or None when only the model can say.

    Certain when every change passes its field's exact check: validation keeps such a value as it is (a list
    copied), and every other field already is its own validated, dumped value, which validation leaves alone."""
    if not _field_table(model).plain(changes):
        return None
    rec = {**old, **changes}
    for key, value in changes.items():
        if type(value) is list:
            rec[key] = list(value)
    return rec


def inserted_record(model: type[BaseModel], row: Mapping[str, object]) -> dict[str, object] | None:
    """``row`` (a new record) as validating it with ``model`` and dumping it gives it, or None when only the model
    can say.

    Certain when the model is a plain record model (see :func:`_record_plan`), every required field is given and
    every given value passes its field's exact check: validation keeps such values as they are (a list copied)
    and fills the rest with their defaults, and the dump lists the fields in the model's order (which the merge
    into the defaults keeps: a key already there keeps its place)."""
    plan = _record_plan(model)
    if plan is None or not plan.fields.plain(row) or not row.keys() >= plan.required:
        return None
    out = {**plan.defaults, **row}
    for name in plan.lists:
        value = out[name]
        if isinstance(value, list):
            out[name] = list(value)
    return out


class RecordPlan:
    """A plain record model's fields, in order, with their defaults (None where required: every such field must be
    given), the required ones, each field's exact check and the fields holding lists of texts."""

    __slots__ = ("defaults", "fields", "lists", "required")

    def __init__(
        self, model: type[BaseModel], defaults: dict[str, object], checks: dict[str, Check | frozenset[type]]
    ) -> None:
        self.defaults = defaults
        self.fields = Fields(checks)
        self.required = frozenset(n for n, f in model.model_fields.items() if f.is_required())
        self.lists = tuple(n for n, f in model.model_fields.items() if _is_list(f.annotation))


@lru_cache(maxsize=1024)
def _record_plan(model: type[BaseModel]) -> RecordPlan | None:
    """The plan of a plain record model; None for a model whose validation or dump does more (validators,
    serializers, computed fields, aliases, excluded fields, default factories, a default its own check refuses)."""
    decorators = model.__pydantic_decorators__
    if not _plain_model(model) or decorators.field_serializers or decorators.model_serializers:
        return None
    if decorators.computed_fields:
        return None
    defaults: dict[str, object] = {}
    checks: dict[str, Check | frozenset[type]] = {}
    for name, info in model.model_fields.items():
        check = _field_check(info)
        if check is None or _renamed(name, info) or info.serialization_alias not in (None, name) or info.exclude:
            return None
        if info.default_factory is not None:
            return None
        default = None if info.is_required() else info.default
        if not info.is_required() and not (type(default) in check if isinstance(check, frozenset) else check(default)):
            return None
        defaults[name] = default
        checks[name] = check
    return RecordPlan(model, defaults, checks)


def _field_check(info: FieldInfo) -> Check | frozenset[type] | None:
    """An exact check of a field's value (a set of types: the value's exact type is one of them), or None when
    the field is not one the table judges. A check is one function, its parts inlined: it runs for every field
    of every write."""
    annotation, optional = _unwrap_optional(info.annotation)
    metadata = list(info.metadata)
    if get_origin(annotation) is Annotated:  # ``Annotated[...] | None``: the metadata stays inside the union
        annotation, *inner_metadata = get_args(annotation)
        metadata += inner_metadata
    if isinstance(annotation, type) and annotation in (str, int, float, bool) and not metadata:
        return frozenset({annotation, type(None)} if optional else {annotation})
    bounds = []
    keeps = []
    for meta in metadata:
        bound = _BOUNDS.get(type(meta))
        if bound is not None:
            bounds.append((bound[1], getattr(meta, bound[0])))
            continue
        func = _plain_after(meta)
        if func is None:
            return None
        keeps.append(func)
    if keeps and not bounds and annotation is str:
        return _kept(keeps, optional)
    if bounds and not keeps and isinstance(annotation, type) and annotation in (int, float):
        return _within(annotation, bounds, optional)
    return None if bounds or keeps else _base_check(annotation, optional)


def _within(exact: type, bounds: list[tuple[Compare, object]], optional: bool) -> Check:
    """A number of type ``exact`` within every bound (or None, when ``optional``)."""

    def within(v: object) -> bool:
        if type(v) is not exact:
            return optional and v is None
        for cmp, bound in bounds:  # noqa: SIM110 - hot path: a plain loop, no generator per value
            if not cmp(v, bound):
                return False
        return True

    return within


def _kept(keeps: list[Callable[[str], object]], optional: bool) -> Check:
    """A text every after-validator keeps as it is (or None, when ``optional``)."""

    def kept(v: object) -> bool:
        if type(v) is not str:
            return optional and v is None
        for keep in keeps:  # noqa: SIM110 - hot path: a plain loop, no generator per value
            if not _keeps(keep, v):
                return False
        return True

    if len(keeps) > 1:
        return kept
    (keep,) = keeps

    def kept_by_one(v: object) -> bool:  # ``kept`` with ``_keeps`` inlined: the usual field (a date, an address)
        if type(v) is not str:
            return optional and v is None
        try:
            out = keep(v)
        except Exception:  # whatever it raises, the model raises it again
            return False
        return type(out) is str and out == v

    return kept_by_one


def _plain_after(meta: object) -> Callable[[str], object] | None:
    """The function of an ``AfterValidator`` that takes the value alone (as pydantic calls a one-parameter one)."""
    if not isinstance(meta, AfterValidator):
        return None
    try:
        params = list(inspect.signature(meta.func).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return cast(Callable[[str], object], meta.func) if len(params) == 1 and params[0].kind in positional else None


def _keeps(func: Callable[[str], object], value: str) -> bool:
    """Whether an after-validator (a pure check such as ``check_date``) passes ``value`` and gives it back as it
    is; anything else (an error, a normalised value) is the model's to report or make."""
    try:
        out = func(value)
    except Exception:  # whatever it raises, the model raises it again
        return False
    return type(out) is str and out == value


def _unwrap_optional(annotation: object) -> tuple[object, bool]:
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1 and len(get_args(annotation)) == 2:
            return rest[0], True
    return annotation, False


def _base_check(annotation: object, optional: bool = False) -> Check | None:
    if annotation in (str, int, float, bool):
        exact = annotation
        return (lambda v: v is None or type(v) is exact) if optional else (lambda v: type(v) is exact)
    if get_origin(annotation) is Literal and all(type(a) is str for a in get_args(annotation)):
        allowed = frozenset(get_args(annotation))
        if optional:
            return lambda v: v is None or (type(v) is str and v in allowed)
        return lambda v: type(v) is str and v in allowed
    if _is_list(annotation):
        if optional:
            return lambda v: v is None or (type(v) is list and (not v or {*map(type, v)} == _TEXT))
        return lambda v: type(v) is list and (not v or {*map(type, v)} == _TEXT)
    return None


def _is_list(annotation: object) -> bool:
    annotation, _ = _unwrap_optional(annotation)
    return get_origin(annotation) is list and get_args(annotation) == (str,)
