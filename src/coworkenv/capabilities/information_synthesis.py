"""information_synthesis: gather facts from several records and report an aggregate or computation."""

from __future__ import annotations

from coworkenv.capabilities.base import Capability, Ingredient

CAPABILITY = Capability(
    name="information_synthesis",
    description=(
        "Read several records, aggregate or compute over them (totals, counts, the earliest, the overdue "
        "ones) and state the result to the user."
    ),
    ingredients=(
        Ingredient(
            "reported_result",
            "an answer check on a computed number or on collected values",
            lambda spec: any(c.reads == "answer" for c in spec.checks),
        ),
    ),
    probes=("vague_answer",),
)
