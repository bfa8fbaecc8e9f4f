"""The size budget of one evaluation: what an expression builds, counted at its expanded size.

A bound per operation misses sizes hidden across operations: ``[[1]*999999]*999999`` repeats a
one-item list, then a list of one million, and is a 10¹² list in disguise that comparing, sorting or
printing walks in full. So a value counts at its *expanded* size (a list counts the sizes of its
items, every time an item appears; a string its characters; a dict its keys and values; anything
else 1), every value an operation builds is charged before it is built, and one evaluation (a whole
expression, or a whole template with all its references) builds at most :data:`MAX_BUILT` in all.
A value built inside another counts in both: the budget bounds the work done, which includes every
intermediate value.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar


class ExprError(ValueError):
    """A syntax or evaluation error in a spec expression (an over-budget value among them)."""


MAX_BUILT = 1_000_000
"""Characters and items one evaluation may build, all its operations together."""


V = TypeVar("V")
C = TypeVar("C")
R = TypeVar("R")


class _Budget:
    """What is left to build in one evaluation, and the sizes of the containers it built (by identity; the
    containers are held, so an id is never reused while the evaluation runs)."""

    __slots__ = ("known", "left")

    def __init__(self) -> None:
        self.left = MAX_BUILT
        self.known: dict[int, tuple[object, int]] = {}


_CURRENT: ContextVar[_Budget | None] = ContextVar("coworkenv_expr_budget", default=None)


def size(value: object, limit: int = MAX_BUILT) -> int:
    """The expanded size of ``value``, or some number over ``limit`` once the count passes it.

    Iterative (a value nested thousands of levels deep needs no stack) and stopped at ``limit``: each item
    looked at adds at least one, so the walk costs at most ``limit`` steps, however large the value."""
    budget = _CURRENT.get()
    known = budget.known if budget is not None else {}
    total = 0
    stack: list[object] = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) or 1
        elif isinstance(item, list | tuple | dict):
            hit = known.get(id(item))
            if hit is not None and hit[0] is item:
                total += hit[1]
            elif not item:
                total += 1
            elif isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            else:
                stack.extend(item)
        else:
            total += 1
    return total


def left() -> int:
    """What the running evaluation may still build (:data:`MAX_BUILT` outside one)."""
    budget = _CURRENT.get()
    return budget.left if budget is not None else MAX_BUILT


def charge(amount: int, what: str) -> None:
    """Count ``amount`` against the running evaluation's budget; an ExprError naming ``what`` past it."""
    budget = _CURRENT.get()
    have = budget.left if budget is not None else MAX_BUILT
    if amount > have:
        raise ExprError(f"{what} would build more than {have} characters or items (at most {MAX_BUILT} an evaluation)")
    if budget is not None:
        budget.left -= amount


def built(value: V, amount: int) -> V:
    """``value``, remembered with its size ``amount`` so a later operation on it need not walk it again."""
    budget = _CURRENT.get()
    if budget is not None and isinstance(value, list | dict):
        budget.known[id(value)] = (value, amount)
    return value


def charged(value: object, what: str) -> int:
    """Charge the expanded size of ``value`` (an operation is about to build something that large from it)."""
    amount = size(value, left())
    charge(amount, what)
    return amount


def budgeted(fn: Callable[[C], R]) -> Callable[[C], R]:
    """``fn`` run under a fresh budget, unless it runs inside an evaluation that already has one."""

    def run(ctx: C) -> R:
        if _CURRENT.get() is not None:
            return fn(ctx)
        token = _CURRENT.set(_Budget())
        try:
            return fn(ctx)
        finally:
            _CURRENT.reset(token)

    return run
