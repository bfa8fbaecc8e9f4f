"""Novelty: MinHash sketches of environments, and the workflows the bank already has plenty of.

An environment's features are word 3-shingles of its opening request, bigrams of the
reference's tool sequence and its check kinds; two environments whose sketches agree on
``NEAR_DUPLICATE`` of their slots are near-duplicates, and the later one is rejected.
Hashes are keyed blake2b, so sketches are the same in every process and run.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise

from coworkenv.capabilities.base import called_tools
from coworkenv.spec.models import TaskSpec

PERMUTATIONS = 64
NEAR_DUPLICATE = 0.8
RECENT = 64
"""How many of the latest admitted workflows the diversify prompt looks at."""
MOST_COMMON = 5


def features(spec: TaskSpec) -> set[str]:
    words = re.findall(r"[a-z0-9]+", spec.user.opening.lower())
    tools = ["<start>", *called_tools(spec), "<end>"]
    out = {"w:" + " ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))}
    out |= {f"t:{a}>{b}" for a, b in pairwise(tools)}
    out |= {f"c:{c.kind}" for c in spec.checks}
    return out


def sketch(items: Iterable[str]) -> list[int]:
    """The MinHash signature: per permutation, the least 64-bit keyed hash over the items."""
    keys = [i.to_bytes(8, "big") for i in range(PERMUTATIONS)]
    encoded = [item.encode() for item in sorted(set(items))] or [b""]
    return [
        min(int.from_bytes(hashlib.blake2b(e, digest_size=8, key=key).digest(), "big") for e in encoded) for key in keys
    ]


def similarity(a: list[int], b: list[int]) -> float:
    """Estimated Jaccard similarity of the feature sets behind two sketches."""
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def workflow(spec: TaskSpec) -> str:
    """What an environment makes the agent do: the reference's tool sequence."""
    return " → ".join(called_tools(spec))


def common_workflows(recent: list[tuple[str, str]]) -> tuple[str, ...]:
    """The most common of the latest (workflow, title) pairs as prompt lines (ties: first seen first)."""
    window = recent[-RECENT:]
    counts = Counter(w for w, _ in window)
    example: dict[str, str] = {}
    for w, title in window:
        example.setdefault(w, title)
    return tuple(f"{w} ({n}×, e.g. {example[w]!r})" for w, n in counts.most_common(MOST_COMMON))
