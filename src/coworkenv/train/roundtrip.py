"""Pre-flight check: a checkpoint's tokenizer must reload as exactly the tokenizer that trained it.

A tokenizer that reloads differently turns a good checkpoint into garbage without any error:
transformers 5.17 reloaded the GGUF-converted Gemma tokenizer as a merge-less BPE (a rendered
conversation of 68 tokens came back as 181 different ids), so RL trained, and evaluation
measured, a broken model. Training therefore refuses to start unless saving the tokenizer and
loading it back the way :func:`coworkenv.agents.transformers_policy.load_tokenizer` does gives
the same ids for a rendered conversation (tool calls, tool results, turn markers) and the same
special tokens.
"""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING, NamedTuple

from coworkenv.agents.chat_format import CHAT_TEMPLATE, END_OF_TURN, as_text, template_messages
from coworkenv.agents.transformers_policy import load_tokenizer

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

PROBE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "calendar_list_events",
            "description": "List events in a date range.",
            "parameters": {
                "type": "object",
                "properties": {"start_date": {"type": "string"}},
                "required": ["start_date"],
            },
        },
    }
]
PROBE: list[dict[str, object]] = [
    {"role": "system", "content": "You are an AI coworker helping a busy colleague."},
    {"role": "user", "content": "Could you check my calendar for 2026-03-02 and email Bob Müller?  Thanks"},
    {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "calendar_list_events", "arguments": {"start_date": "2026-03-02"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"items": [{"title": "Standup", "start": "09:00"}]}'},
    {"role": "assistant", "content": "You have a standup at 09:00.\tShall I email Bob?"},
]


class RoundTripError(RuntimeError):
    """The saved tokenizer would reload as a different tokenizer."""


def probe_text(tokenizer: PreTrainedTokenizerBase) -> str:
    """A rendered conversation with every part of the project's chat format."""
    text = tokenizer.apply_chat_template(
        template_messages(PROBE), tools=list(PROBE_TOOLS), chat_template=CHAT_TEMPLATE, tokenize=False
    )
    return as_text(text, "the chat template")


class Fingerprint(NamedTuple):
    """What must survive a round trip: the probe's ids, the special tokens, the vocabulary size."""

    ids: list[int]
    special: dict[str, object]
    end_of_turn: object
    size: int


def fingerprint(tokenizer: PreTrainedTokenizerBase) -> Fingerprint:
    ids = tokenizer(probe_text(tokenizer), add_special_tokens=False)["input_ids"]
    return Fingerprint(
        ids=ids,
        special={name: getattr(tokenizer, f"{name}_token_id") for name in ("bos", "eos", "pad", "unk")},
        end_of_turn=tokenizer.convert_tokens_to_ids(END_OF_TURN),
        size=len(tokenizer),
    )


def check_round_trip(tokenizer: PreTrainedTokenizerBase) -> None:
    """Raise :class:`RoundTripError` unless ``tokenizer`` saves and reloads exactly."""
    before = fingerprint(tokenizer)
    with tempfile.TemporaryDirectory(prefix="coworkenv-tok-") as folder:
        tokenizer.save_pretrained(folder)
        after = fingerprint(load_tokenizer(folder))
    if before == after:
        return
    a, b = before.ids, after.ids
    first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    diffs = [k for k, x, y in zip(Fingerprint._fields, before, after, strict=True) if x != y]
    raise RoundTripError(
        f"tokenizer {type(tokenizer).__name__} does not reload exactly ({', '.join(diffs)} differ): "
        f"the probe conversation is {len(a)} ids before saving and {len(b)} after, first difference at "
        f"position {first}; a checkpoint saved from it would be evaluated and trained as a different model"
    )
