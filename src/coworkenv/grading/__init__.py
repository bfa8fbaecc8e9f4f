"""Check evaluation and the Claw-Eval-compatible score."""

import coworkenv.runtime  # noqa: F401  (first: runtime.environment imports grading.checks; breaks the cycle)
from coworkenv.grading.checks import EpisodeLog, episode_check, numbers_in, state_check
from coworkenv.grading.score import PASS_THRESHOLD, combine, grade

__all__ = ["PASS_THRESHOLD", "EpisodeLog", "combine", "episode_check", "grade", "numbers_in", "state_check"]
