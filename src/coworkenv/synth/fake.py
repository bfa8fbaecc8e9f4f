"""Faker for synthesis: one en_US generator, with its weighted one-element draws made from tables summed once.

Faker draws a first or last name by weight from tables of thousands of names, and sums the
weights again on every draw (``random.choices(weights=...)``): that was the largest share of
composing a spec. The same draw from cumulative weights summed once takes the same random
number and bisects the same sums, so every seed gives the names it always gave (a test
compares this generator with a plain ``Faker("en_US")`` on every method synthesis calls).
Only the providers synthesis calls are loaded (building all of them cost more than a
hundred specs' names).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from functools import cache
from itertools import accumulate
from math import isfinite
from typing import Any

PROVIDERS = ("person", "company", "lorem", "internet")
"""The Faker providers synthesis calls (internet's user names and domain words read person and company)."""

_Table = tuple[tuple[Any, ...], list[float], float]


@cache
def generator() -> Any:
    """The shared generator (callers seed it before use: ``generator().seed_instance(seed)``)."""
    from faker import Factory  # imported lazily: it takes a while and only synthesis needs it

    fake = Factory.create("en_US", providers=[f"faker.providers.{name}" for name in PROVIDERS])
    for provider in fake.get_providers():
        provider.random_elements = _Draws(provider)  # type: ignore[method-assign]
    return fake


class _Draws:
    """A provider's ``random_elements``: one element with replacement drawn here, anything else by Faker."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.faker = provider.random_elements  # the class's method, bound before this replaces it on the instance
        self.tables: dict[int, tuple[Any, _Table | None]] = {}

    def __call__(
        self,
        elements: Any = ("a", "b", "c"),
        length: int | None = None,
        unique: bool = False,
        use_weighting: Any = None,
    ) -> Any:
        if length == 1 and not unique and use_weighting is None:
            random = self.provider.generator.random
            if isinstance(elements, tuple | list | str):
                return [random.choice(elements)]  # Faker's draw of one unweighted element
            if type(elements) is OrderedDict and self.provider.__use_weighting__:
                table = self._table(elements)
                if table is not None:
                    keys, cum, total = table  # random.choices(keys, weights, k=1), its sums made once
                    return [keys[bisect_right(cum, random.random() * total, 0, len(keys) - 1)]]
        return self.faker(elements, length, unique, use_weighting)

    def _table(self, elements: OrderedDict[Any, float]) -> _Table | None:
        """The keys, cumulative weights and total of a weighted table (None where Faker would raise)."""
        hit = self.tables.get(id(elements))
        if hit is None or hit[0] is not elements:
            cum = list(accumulate(elements.values()))
            total = cum[-1] + 0.0 if cum else 0.0
            table = (tuple(elements), cum, total) if total > 0.0 and isfinite(total) else None
            hit = self.tables[id(elements)] = (elements, table)
        return hit[1]
