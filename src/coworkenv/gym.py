"""Gymnasium entry point: importing it registers ``coworkenv/Bank-v0``.

import gymnasium, coworkenv.gym
env = gymnasium.make("coworkenv/Bank-v0", bank="out/bank")   # or spec="examples/x.yaml"
"""

from coworkenv.interop.gym_env import ENV_ID, CoworkEnv, register

register()

__all__ = ["ENV_ID", "CoworkEnv", "register"]
