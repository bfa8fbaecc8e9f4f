"""A policy backed by a local transformers causal LM, reading and writing tool calls as text.

The prompt is the project's chat template (:mod:`coworkenv.agents.chat_format`) and the
reply is parsed with the same format, so what SFT teaches is exactly what runs here.
``act_batch`` generates for many conversations at once (left padding), which is how the
rollout runner and RL training keep a small model busy.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from coworkenv.agents.chat_format import CHAT_TEMPLATE, END_OF_TURN, as_text, parse_assistant_text, render_prompt
from coworkenv.agents.tiny import START_OF_TURN
from coworkenv.runtime.turn import AssistantTurn

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

Tok = TypeVar("Tok", bound="PreTrainedTokenizerBase")
Conversation = tuple[list[dict[str, object]], list[dict[str, object]]]


def prepare_tokenizer(tokenizer: Tok) -> Tok:
    """Give any tokenizer the project's template, left padding and a pad token."""
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def stop_token_ids(tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """Tokens that end an assistant turn: eos, and the turn markers when the vocabulary has them."""
    ids = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    unk = tokenizer.unk_token_id
    for token in (END_OF_TURN, START_OF_TURN):
        tid = tokenizer.convert_tokens_to_ids(token)
        if isinstance(tid, int) and tid != unk and tid not in ids:
            ids.append(tid)
    return ids


def step_index(messages: list[dict[str, object]]) -> int:
    """The index of the turn being generated, so tool-call ids stay unique in an episode."""
    return 1 + sum(1 for m in messages if m.get("role") == "assistant")


@dataclass
class DecodeStats:
    """Generation throughput: rows x decode steps of every ``generate`` call, and their wall time."""

    calls: int = 0
    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0

    def add(self, rows: int, steps: int, seconds: float) -> None:
        self.calls += 1
        self.steps += steps
        self.tokens += rows * steps
        self.seconds += seconds

    def summary(self) -> dict[str, float]:
        """Tokens per second (padded rows included: what the batch computed), steps per second."""
        t = max(self.seconds, 1e-9)
        return {
            "generate_calls": self.calls,
            "decode_steps": self.steps,
            "decode_seconds": round(self.seconds, 3),
            "decode_tokens_per_s": round(self.tokens / t, 1),
            "decode_steps_per_s": round(self.steps / t, 2),
        }


class TransformersPolicy:
    """Greedy (``temperature=0``) or sampled generation from a local model."""

    def __init__(
        self,
        model: Any,
        tokenizer: PreTrainedTokenizerBase,
        *,
        max_new_tokens: int = 256,
        temperature: float = 0.0,
        name: str = "hf",
        cache: str | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = prepare_tokenizer(tokenizer)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.name = name
        self.cache = cache
        """transformers' ``cache_implementation`` (``static`` on GPU); None = its default dynamic cache."""
        self.stop_ids = stop_token_ids(self.tokenizer)
        self.decode = DecodeStats()

    def act(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> AssistantTurn:
        return self.act_batch([(messages, tools)])[0]

    def act_batch(self, items: list[Conversation]) -> list[AssistantTurn]:
        """One turn for each conversation, generated in one left-padded batch."""
        if not items:
            return []
        texts = self.generate([render_prompt(self.tokenizer, m, t) for m, t in items])
        turns = []
        for (messages, _), (text, usage) in zip(items, texts, strict=True):
            turn = parse_assistant_text(text, step=step_index(messages))
            turn.usage = usage
            turns.append(turn)
        return turns

    def generate(self, prompts: list[str]) -> list[tuple[str, dict[str, int]]]:
        """Completion text (cut at the first stop token) and token usage per prompt."""
        # lazy: an optional extra (train); the core and the CLI must run without it
        import torch

        enc = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: v.to(self.model.device) for k, v in enc.items()}
        sampling: dict[str, object] = (
            {"do_sample": True, "temperature": self.temperature}
            if self.temperature > 0
            else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        )
        if self.cache:
            sampling["cache_implementation"] = self.cache
        start = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(  # stops as soon as every row has produced a stop token
                **enc,
                max_new_tokens=self.max_new_tokens,
                eos_token_id=self.stop_ids,
                pad_token_id=self.tokenizer.pad_token_id,
                **sampling,
            )
        width = enc["input_ids"].shape[1]
        self.decode.add(out.shape[0], out.shape[1] - width, time.perf_counter() - start)
        results = []
        for row, mask in zip(out[:, width:].tolist(), enc["attention_mask"].tolist(), strict=True):
            cut = next((i for i, t in enumerate(row) if t in self.stop_ids), None)
            kept = row if cut is None else row[:cut]
            usage = {"prompt_tokens": int(sum(mask)), "completion_tokens": len(kept) + (cut is not None)}
            text = as_text(self.tokenizer.decode(kept, skip_special_tokens=False), "decoding")
            results.append((text, usage))
        return results


def resolve_dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    """``"bfloat16"`` -> ``torch.bfloat16``; None keeps the checkpoint's own (float32 on CPU)."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    if dtype is None or not isinstance(dtype, str):
        return dtype
    value = getattr(torch, dtype, None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"unknown dtype {dtype!r}")
    return value


def default_device(device: str | None) -> str:
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


def load_tokenizer(path_or_id: str) -> PreTrainedTokenizerBase:
    """A checkpoint's tokenizer with the project's chat template (what training's round-trip check reloads)."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import AutoTokenizer

    return prepare_tokenizer(AutoTokenizer.from_pretrained(path_or_id))


def load_hf(
    path_or_id: str, dtype: str | torch.dtype | None = None, device: str | None = None
) -> tuple[Any, PreTrainedTokenizerBase]:
    """Load a local (or cached) transformers model and tokenizer with the project's chat template."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(path_or_id)
    kwargs = {"dtype": resolve_dtype(dtype)} if dtype is not None else {}
    model = AutoModelForCausalLM.from_pretrained(path_or_id, **kwargs)
    model.to(default_device(device))  # type: ignore[arg-type]  # transformers types the wrapped .to as unbound
    model.eval()
    return model, tokenizer
