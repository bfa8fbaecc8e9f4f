"""Verification (judging only): static checks, the probe runner and the admission rule."""

from coworkenv.verify.admission import Verification, verify
from coworkenv.verify.findings import FINDING_KINDS, Finding
from coworkenv.verify.static import static_findings

__all__ = ["FINDING_KINDS", "Finding", "Verification", "static_findings", "verify"]
