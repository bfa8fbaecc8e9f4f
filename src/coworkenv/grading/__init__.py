"""Check evaluation and the Claw-Eval-compatible score."""

from coworkenv.grading.checks import EpisodeLog, episode_check, state_check
from coworkenv.grading.score import PASS_THRESHOLD, combine, grade
from coworkenv.values import numbers_in

__all__ = ["PASS_THRESHOLD", "EpisodeLog", "combine", "episode_check", "grade", "numbers_in", "state_check"]
