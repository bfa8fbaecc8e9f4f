"""Check evaluation and the Claw-Eval-compatible score."""

from coworkenv.grading.checks import EpisodeLog, episode_check, numbers_in, state_check
from coworkenv.grading.score import PASS_THRESHOLD, combine, grade

__all__ = ["PASS_THRESHOLD", "EpisodeLog", "combine", "episode_check", "grade", "numbers_in", "state_check"]
