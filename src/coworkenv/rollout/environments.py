"""The environment an episode runs in: scripted user, or an LLM user simulator behind an OpenAI-compatible server.

Rollout, evaluation and training all build their environments here, so ``--user`` means one thing.
"""

from __future__ import annotations

from coworkenv.agents.llm_user import LLMUserEnvironment
from coworkenv.agents.openai_policy import parse_openai_spec
from coworkenv.runtime.environment import Environment
from coworkenv.spec.models import TaskSpec


def make_environment(
    spec: TaskSpec,
    seed: int = 0,
    *,
    user: str | None = None,
    fault_rate: float = 0.0,
    max_turns: int | None = None,
) -> Environment:
    """The environment for an episode.

    ``user`` is None (scripted) or ``openai:<model>@<base_url>``; ``max_turns`` caps the
    episode below the spec's own limit (a budget for slow local models), never above it.
    """
    turns = min(spec.max_turns, max_turns or spec.max_turns)
    if not user or user == "scripted":
        return Environment(spec, seed=seed, fault_rate=fault_rate, max_turns=turns)
    kind, _, rest = user.partition(":")
    if kind != "openai":
        raise ValueError(f"unknown user simulator {user!r}; expected 'scripted' or 'openai:<model>@<base_url>'")
    model, base_url = parse_openai_spec(rest)
    return LLMUserEnvironment(spec, model=model, base_url=base_url, seed=seed, fault_rate=fault_rate, max_turns=turns)
