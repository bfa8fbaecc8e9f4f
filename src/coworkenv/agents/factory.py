"""Build a policy from a short spec string, as used on the command line.

- ``oracle``: the teacher that runs the reference solution;
- ``openai:<model>@<base_url>``: any OpenAI-compatible server (``openai:<model>`` uses
  ``$OPENAI_BASE_URL`` or the SDK default);
- ``hf:<path-or-id>``: a local transformers model, tool calls parsed from text;
- ``embedded``: Gemma 3 270M from the bundled GGUF packages;
- ``probe:<name>``: one of the verifier's scripted wrong behaviours.

Backends are imported inside their branch so ``oracle`` runs need no heavy dependency.
"""

from __future__ import annotations

from typing import Any

from coworkenv.agents.oracle import OracleTeacher

POLICY_SPECS = "oracle | openai:<model>@<base_url> | hf:<path-or-id> | embedded | probe:<name>"


def parse_openai_spec(rest: str) -> tuple[str, str | None]:
    """``model@base_url`` -> (model, base_url); the URL may itself contain '@' only after the model."""
    model, sep, base_url = rest.partition("@")
    if not model:
        raise ValueError("openai policy needs a model: openai:<model>@<base_url>")
    return model, (base_url if sep else None)


def make_policy(spec: str, **options: Any) -> Any:
    """A Policy or TaskPolicy for ``spec``; ``options`` go to the backend's constructor."""
    kind, _, rest = spec.partition(":")
    if spec == "oracle":
        return OracleTeacher()
    if kind == "openai" and rest:
        from coworkenv.agents.openai_policy import OpenAIPolicy

        model, base_url = parse_openai_spec(rest)
        return OpenAIPolicy(model, base_url=base_url, **options)
    if kind == "hf" and rest:
        from coworkenv.agents.transformers_policy import TransformersPolicy, load_hf

        model, tokenizer = load_hf(rest)
        return TransformersPolicy(model, tokenizer, name=spec, **options)
    if spec == "embedded":
        from coworkenv.agents.embedded import load_embedded
        from coworkenv.agents.transformers_policy import TransformersPolicy

        model, tokenizer = load_embedded()
        return TransformersPolicy(model, tokenizer, name="embedded", **options)
    if kind == "probe" and rest:
        from coworkenv.verify.probes import make_probe

        return make_probe(rest)
    raise ValueError(f"unknown policy {spec!r}; expected {POLICY_SPECS}")
