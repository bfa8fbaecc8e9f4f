"""The Claw-Eval-compatible score, live state-check results and multi-stage grades."""

from coworkenv.grading.score import PASS_THRESHOLD, combine, grade
from coworkenv.spec.checks import EpisodeLog
from coworkenv.values import numbers_in

__all__ = ["PASS_THRESHOLD", "EpisodeLog", "combine", "grade", "numbers_in"]
