"""The capability taxonomy: one module per capability, with ingredients and negative probes."""

from coworkenv.capabilities.base import Capability, Ingredient
from coworkenv.capabilities.registry import (
    BASELINE_PROBES,
    CAPABILITIES,
    capability,
    missing_ingredients,
)

__all__ = [
    "BASELINE_PROBES",
    "CAPABILITIES",
    "Capability",
    "Ingredient",
    "capability",
    "missing_ingredients",
]
