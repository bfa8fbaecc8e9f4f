"""The typed Python API: ``coworkenv.make(...)``.

:class:`Env` wraps the runtime :class:`~coworkenv.runtime.Environment` without changing it:
``reset``/``step`` return its :class:`~coworkenv.runtime.observation.Observation` with ``reward`` set (the
score of the episode so far; the final grade's score once ``done``) and, once done, the grade in ``info``. The
HTTP server, its client, Gymnasium, MCP and TRL all speak this one shape. ``Env`` also keeps the attributes
:func:`coworkenv.runtime.run_episode` uses (``spec``, ``messages``, ``end``, ``trajectory``), so
the project's own episode loop runs on it unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from coworkenv.interop.catalog import Catalog
from coworkenv.runtime.asynchronous import AsyncMethods
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.observation import Observation as Observation  # served from here too
from coworkenv.spec import spec_from_data
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Grade, Trajectory


class Env(AsyncMethods[Observation]):
    """One environment with the typed observation. Thread-compatible, not thread-safe: one episode at a time."""

    def __init__(self, spec: TaskSpec, seed: int = 0, *, max_turns: int | None = None) -> None:
        self.runtime = Environment(spec, seed=seed, max_turns=max_turns)

    @property
    def spec(self) -> TaskSpec:
        return self.runtime.spec

    @property
    def messages(self) -> list[dict[str, object]]:
        return self.runtime.messages

    @property
    def done(self) -> bool:
        return self.runtime.done

    def reset(self) -> Observation:
        return self._observe(self.runtime.reset())

    def step(self, turn: object) -> Observation:
        """``turn``: an AssistantTurn, an OpenAI assistant message dict, or plain text to the user."""
        return self._observe(self.runtime.step(turn))

    def grade(self) -> Grade:
        return self.runtime.grade()

    def end(self, reason: str) -> None:
        self.runtime.end(reason)

    def state(self) -> dict[str, object]:
        """Where the episode stands: step, done, the messages and the workspace's content hash and diff."""
        rt = self.runtime
        return {
            "env_id": rt.spec.id,
            "seed": rt.seed,
            "step": rt.step_count,
            "done": rt.done,
            "done_reason": rt.done_reason,
            "messages": list(rt.messages),
            "state_hash": rt.workspace.state_hash(),
            "diff": rt.workspace.diff(),
        }

    def trajectory(self, policy: str = "", sample: int = 0) -> Trajectory:
        return self.runtime.trajectory(policy=policy, sample=sample)

    def _observe(self, obs: Observation) -> Observation:
        """The runtime's observation with the score so far as its reward (and the grade, once done)."""
        grade = self.runtime.grade()
        info = dict(obs.info)
        if obs.done:
            info["grade"] = grade.model_dump(mode="json")
        return replace(obs, reward=grade.score, info=info)


def resolve_spec(source: TaskSpec | dict[str, object] | str | Path, env_id: str | None = None) -> TaskSpec:
    """A spec from a TaskSpec, spec data, a spec file, or a bank/spec folder plus ``env_id``.

    ``"BANK::ID"`` is shorthand for ``(BANK, env_id=ID)``.
    """
    if isinstance(source, TaskSpec):
        return source
    if isinstance(source, dict):
        return spec_from_data(source)
    text = str(source)
    if env_id is None and "::" in text:
        text, env_id = text.rsplit("::", 1)
    catalog = Catalog.load([text])
    if env_id is not None:
        return catalog.get(env_id)
    if len(catalog) != 1:
        raise ValueError(f"{text} holds {len(catalog)} environments; pass env_id= (or 'PATH::ID') to choose one")
    return catalog.get(catalog.ids()[0])


def make(
    source: TaskSpec | dict[str, object] | str | Path,
    env_id: str | None = None,
    *,
    seed: int = 0,
    max_turns: int | None = None,
) -> Env:
    """Open an environment: ``coworkenv.make("examples/x.yaml")`` or ``make("bank", env_id=...)``."""
    return Env(resolve_spec(source, env_id), seed=seed, max_turns=max_turns)
