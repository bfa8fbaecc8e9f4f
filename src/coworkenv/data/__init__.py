"""The two data streams: curated SFT demonstrations and RL per-turn records."""
