"""Verification: static checks, the probe runner, the admission rule and the repair loop."""

from coworkenv.verify.admission import Verification, verify
from coworkenv.verify.findings import FINDING_KINDS, Finding
from coworkenv.verify.static import static_findings

__all__ = ["FINDING_KINDS", "Finding", "Verification", "static_findings", "verify"]
