"""An adapter for TRL's ``GRPOTrainer(environment_factory=...)`` (TRL >= 1.x).

TRL discovers an environment's tools as the public methods of its class, renders their
schemas from signatures and docstrings, calls ``reset(**row)`` before each rollout
(appending the returned text to the prompt) and ``get_reward()`` after it. So the class is
built from the bank's tool schemas: one method per coworkenv tool (typed parameters, an
``Args:`` docstring) plus ``message_user``, through which the model asks the scripted user
and reports; TRL stops a rollout at the first turn without a tool call, so text outside
``message_user`` never reaches the user or the grader. The reward is the grade's score.

No code is generated from text: methods are closures with an explicit ``__signature__``.
"""

from __future__ import annotations

import inspect
import random
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, TypeVar

from coworkenv.interop.env import Env
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.prompt import system_prompt
from coworkenv.spec.models import TaskSpec, refuse_evaluation_only

MESSAGE_USER = "message_user"
OVER = "The episode is over."
_JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}
_MESSAGE_SCHEMA = {
    "name": MESSAGE_USER,
    "description": "Send a message to the user you work for (a question, a confirmation request, or your report "
    "when the request is done). Returns the user's reply.",
    "parameters": {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "what you say to the user"}},
        "required": ["message"],
    },
}


def _py_type(schema: Mapping[str, object]) -> type | types.GenericAlias:
    kind, items, options = schema.get("type"), schema.get("items"), schema.get("anyOf")
    if isinstance(kind, list):  # ["string", "null"] and the like
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "array":
        return types.GenericAlias(list, (_py_type(items if isinstance(items, dict) and items else {"type": "string"}),))
    if kind is None and isinstance(options, list):
        return _py_type(next((s for s in options if s.get("type") != "null"), {"type": "string"}))
    return _JSON_TYPES.get(str(kind), str)


def _tool_method(function: Mapping[str, object]) -> Callable[..., str]:
    """A method named and typed after one tool schema, that runs the call in the current episode."""
    name, parameters = str(function["name"]), function["parameters"]
    if not isinstance(parameters, dict):
        raise ValueError(f"tool {name}: parameters: not a JSON schema object")
    props: dict[str, dict[str, object]] = parameters.get("properties", {})
    required = set(parameters.get("required", []))

    def method(self: CoworkTrlEnv, **kwargs: object) -> str:
        return self._call(name, kwargs)

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, object] = {}
    ordered = sorted(props, key=lambda k: k not in required)  # required first: a valid Python signature
    for key in ordered:
        hint = _py_type(props[key])
        annotation = hint if key in required else hint | None
        annotations[key] = annotation
        default = inspect.Parameter.empty if key in required else None
        params.append(inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation))
    annotations["return"] = str
    args = "\n".join(f"    {k}: {props[k].get('description') or k.replace('_', ' ')}" for k in ordered)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = str(function.get("description") or name) + (f"\n\nArgs:\n{args}" if args else "")
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method


class CoworkTrlEnv:
    """Base of the generated classes; ``specs`` and the tool methods are set on each subclass."""

    specs: dict[str, TaskSpec] = {}

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self.env: Env | None = None

    def reset(self, env_id: str | None = None, **row: object) -> str:
        """Start an episode of ``env_id`` (a dataset column) or a drawn environment; returns the opening request."""
        chosen = env_id if env_id in self.specs else self._rng.choice(sorted(self.specs))
        self.env = Env(self.specs[chosen])
        opening = str(self.env.reset().messages[-1]["content"])
        return opening

    def get_reward(self) -> float:
        return self.env.grade().score if self.env is not None else 0.0

    def _call(self, name: str, arguments: dict[str, object]) -> str:
        if self.env is None or self.env.done:
            return OVER
        args = {k: v for k, v in arguments.items() if v is not None}
        if name == MESSAGE_USER:
            obs = self.env.step(str(args.get("message", "")))
        else:
            obs = self.env.step({"tool_calls": [{"name": name, "arguments": args}]})
        text = "\n".join(str(m.get("content") or "") for m in obs.messages)
        return f"{text}\n{OVER}".strip() if obs.done else text


def environment_class(specs: Iterable[TaskSpec]) -> type[CoworkTrlEnv]:
    """A CoworkTrlEnv subclass whose methods are the union of the specs' tools plus ``message_user``; refuses
    evaluation-only specs (ValueError): TRL's trainers train on what they play."""
    by_id = {s.id: s for s in specs}
    refuse_evaluation_only(by_id.values(), "TRL environment")
    functions: dict[str, Mapping[str, object]] = {}
    for spec in by_id.values():
        for schema in Environment(spec).router.schemas():
            functions.setdefault(schema["function"]["name"], schema["function"])
    functions[MESSAGE_USER] = _MESSAGE_SCHEMA
    members: dict[str, object] = {name: _tool_method(fn) for name, fn in sorted(functions.items())}
    members["specs"] = by_id
    return type("CoworkEnvironment", (CoworkTrlEnv,), members)


def environment_factory(specs: Iterable[TaskSpec], seed: int = 0) -> Callable[[], CoworkTrlEnv]:
    """What to pass as ``GRPOTrainer(environment_factory=...)``; each instance draws from its own seeded RNG."""
    cls = environment_class(specs)
    counter = iter(range(1 << 30))
    return lambda: cls(seed=seed + next(counter))


def prompt_rows(specs: Iterable[TaskSpec]) -> list[dict[str, object]]:
    """Dataset rows: the system prompt, an empty user turn that ``reset`` fills with the request, and ``env_id``."""
    return [
        {"prompt": [{"role": "system", "content": system_prompt(s)}, {"role": "user", "content": ""}], "env_id": s.id}
        for s in specs
    ]


RESPONSE_TEMPLATE: dict[str, object] = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<start_of_turn>model\n",
    "fields": {
        "tool_calls": {
            "open": "<tool_call>",
            "close_pattern": r"</tool_call>\s*",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"<end_of_turn>\s*", "content": "text"},
    },
}
"""How TRL parses the project's chat format (agents/chat_format.py) back into tool calls."""


class Templated(Protocol):
    """A tokenizer as TRL reads it: ``response_template`` says how to parse a reply back into a turn."""

    response_template: object


_Tokenizer = TypeVar("_Tokenizer", bound=Templated)


def with_response_template(tokenizer: _Tokenizer) -> _Tokenizer:
    """Let TRL parse tool calls written in the project's chat format (the embedded and tiny models use it)."""
    if getattr(tokenizer, "response_template", None) is None:
        tokenizer.response_template = RESPONSE_TEMPLATE
    return tokenizer
