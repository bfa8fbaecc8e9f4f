"""Training on the environments: SFT (TRL SFTTrainer) and multi-turn RL with the environment in the loop."""
