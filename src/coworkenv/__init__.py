"""coworkenv: executable, verified training environments for AI coworkers.

Importing the package is cheap: heavy backends (torch, transformers, TRL, Ray, the OpenAI
SDK) are imported only by the modules that use them, and the public names below are
resolved on first use.

    import coworkenv
    env = coworkenv.make("examples/external_quote_confirmation.yaml")
    obs = env.reset()            # coworkenv.Observation: messages, tools, reward, done, info
"""

from importlib import import_module
from typing import Any

from coworkenv.provenance import VERSION as __version__

_PUBLIC = {
    "make": "coworkenv.interop.env",
    "Env": "coworkenv.interop.env",
    "Observation": "coworkenv.runtime.observation",
    "EpisodeEnv": "coworkenv.runtime.observation",
    "EnvClient": "coworkenv.interop.client",
    "RemoteEnv": "coworkenv.interop.client",
    "AssistantTurn": "coworkenv.runtime.turn",
    "ToolCall": "coworkenv.runtime.turn",
    "Environment": "coworkenv.runtime.environment",
    "run_episode": "coworkenv.runtime.episode",
    "TaskSpec": "coworkenv.spec.models",
    "load_spec": "coworkenv.spec.io",
    "Grade": "coworkenv.trajectory",
    "Trajectory": "coworkenv.trajectory",
}

__all__ = ["__version__", *sorted(_PUBLIC)]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'coworkenv' has no attribute {name!r}")
