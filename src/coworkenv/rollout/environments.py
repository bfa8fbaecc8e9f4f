"""The environment an episode runs in: scripted user, or an LLM user simulator behind an OpenAI-compatible server.

Rollout, evaluation and training all build their environments here, so ``--user`` means one thing.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    llm = user_endpoint(user)
    if llm is None:
        return Environment(spec, seed=seed, fault_rate=fault_rate, max_turns=turns)
    model, base_url = llm
    return LLMUserEnvironment(spec, model=model, base_url=base_url, seed=seed, fault_rate=fault_rate, max_turns=turns)


def user_endpoint(user: str | None) -> tuple[str, str | None] | None:
    """The (model, base_url) of an ``openai:<model>@<base_url>`` user, None for the scripted one."""
    if not user or user == "scripted":
        return None
    kind, _, rest = user.partition(":")
    if kind != "openai":
        raise ValueError(f"unknown user simulator {user!r}; expected 'scripted' or 'openai:<model>@<base_url>'")
    return parse_openai_spec(rest)


def check_user(specs: Sequence[TaskSpec], user: str | None, env_server: str | None = None) -> None:
    """Refuse, before any episode, a run whose user cannot play its specs: a mistyped ``user``, or a persona
    only an LLM can play (``user.persona_turns``) left to the scripted user (or a server's, which is scripted),
    whose conversation would be scored though the persona never spoke."""
    if user_endpoint(user) is not None and not env_server:
        return
    personas = [s.id for s in specs if s.user.persona_turns is not None]
    if personas:
        more = f" (and {len(personas) - 1} more)" if len(personas) > 1 else ""
        raise ValueError(
            f"{personas[0]}{more}: user.persona_turns: the user is a persona an LLM plays; the scripted user has "
            "nothing to say for it: run it with --user openai:<model>@<url>"
            + (" and without --env-server" if env_server else "")
        )
