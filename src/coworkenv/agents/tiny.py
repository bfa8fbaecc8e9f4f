"""A tiny tokenizer and causal LM built in-process, for tests and CPU smoke runs.

Tests must not download weights, yet the transformers code paths (chat template, batched
generation, SFT/RL training) should run exactly as they do for the embedded model. So we
train a byte-level BPE tokenizer on a small corpus in milliseconds and build a randomly
initialised Gemma 3 text model from a config. Both are seeded: same inputs, same objects.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from coworkenv.agents.chat_format import CHAT_TEMPLATE, END_OF_TURN
from coworkenv.services.registry import ALL_TOOLS

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

BOS, EOS, PAD, UNK = "<bos>", "<eos>", "<pad>", "<unk>"
START_OF_TURN = "<start_of_turn>"
TURN_TOKENS = [START_OF_TURN, END_OF_TURN]
TOOL_TOKENS = ["<tool_call>", "</tool_call>"]
"""Kept as plain added tokens (not special) so decoding never drops them."""


def default_corpus() -> list[str]:
    """Text in the shape a policy reads and writes: tool names, arguments, chat turns."""
    lines = [
        "You are an AI coworker helping a busy colleague. Use the tools to act on their workspace.",
        "Could you tell me the date? Shall I go ahead? Everything you asked for is done.",
        'system user model tool {"items":[],"total":0}',
    ]
    for name, info in sorted(ALL_TOOLS.items()):
        args = {k: "value" for k in info.schema()["function"]["parameters"].get("properties", {})}
        lines.append(f"{name}: {info.description}")
        lines.append(json.dumps({"name": name, "arguments": args}))
    return lines


def make_tiny_tokenizer(corpus: list[str] | None = None, vocab_size: int = 1024) -> PreTrainedTokenizerBase:
    """A PreTrainedTokenizerFast with the project's chat template and turn/tool tokens.

    Byte-level BPE: any text encodes (no unknown tokens), and decode(encode(x)) == x.
    """
    # lazy: an optional extra (train); the core and the CLI must run without it
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, EOS, BOS, UNK, *TURN_TOKENS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus if corpus is not None else default_corpus(), trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        additional_special_tokens=TURN_TOKENS,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"
    return fast


def make_tiny_model(tokenizer: PreTrainedTokenizerBase, hidden: int = 64, layers: int = 2, seed: int = 0) -> Any:
    """A randomly initialised Gemma 3 text model (same architecture family as the embedded one)."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    end_of_turn = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    if not isinstance(end_of_turn, int):
        raise TypeError(f"{END_OF_TURN!r} maps to {end_of_turn!r}, not one token id")
    config = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=max(hidden // 4, 8),
        max_position_embeddings=4096,
        sliding_window=512,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=[tokenizer.eos_token_id, end_of_turn],
    )
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = config.eos_token_id
    model.eval()
    return model
