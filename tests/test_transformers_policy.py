"""The transformers policy on a tiny in-process model: template, batching, parsing, loading."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from coworkenv.agents.chat_format import CHAT_TEMPLATE, END_OF_TURN  # noqa: E402
from coworkenv.agents.tiny import make_tiny_model, make_tiny_tokenizer  # noqa: E402
from coworkenv.agents.transformers_policy import TransformersPolicy, load_hf, step_index  # noqa: E402

SYSTEM = {"role": "system", "content": "You are an AI coworker."}
CALL_TURN = {
    "role": "assistant",
    "content": "Searching.",
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "mail_search", "arguments": '{"query": "bob"}'}}
    ],
}


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return make_tiny_tokenizer()


@pytest.fixture
def model(tokenizer: Any) -> Any:
    return make_tiny_model(tokenizer)


def test_tiny_tokenizer_round_trips_and_keeps_markers(tokenizer: Any) -> None:
    text = 'Hi é <tool_call>{"name": "mail_search", "arguments": {}}</tool_call><end_of_turn>'
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids, skip_special_tokens=False) == text
    for marker in ("<tool_call>", "</tool_call>", END_OF_TURN, "<start_of_turn>"):
        assert tokenizer.convert_tokens_to_ids(marker) in ids or marker == "<start_of_turn>"
        assert tokenizer.convert_tokens_to_ids(marker) != tokenizer.unk_token_id
    assert tokenizer.chat_template == CHAT_TEMPLATE
    assert tokenizer.bos_token and tokenizer.eos_token and tokenizer.pad_token


def test_tiny_builders_are_seeded(tokenizer: Any) -> None:
    assert make_tiny_tokenizer().get_vocab() == tokenizer.get_vocab()
    a, b = make_tiny_model(tokenizer, seed=3), make_tiny_model(tokenizer, seed=3)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(next(a.parameters()), next(make_tiny_model(tokenizer, seed=4).parameters()))


def test_batched_generation_matches_one_by_one(tokenizer: Any, model: Any) -> None:
    policy = TransformersPolicy(model, tokenizer, max_new_tokens=10)
    short = ([SYSTEM, {"role": "user", "content": "hi"}], [])
    long = ([SYSTEM, {"role": "user", "content": "please find the invoice mail from Acme and forward it"}], [])
    batch = policy.act_batch([short, long])
    single = [policy.act(*short), policy.act(*long)]
    assert [t.model_dump() for t in batch] == [t.model_dump() for t in single]
    assert batch[0].usage["prompt_tokens"] < batch[1].usage["prompt_tokens"]
    assert 1 <= batch[0].usage["completion_tokens"] <= 10
    assert policy.act_batch([]) == []


class ScriptedLM:
    """A stand-in model whose 'generation' is fixed text, to test cutting and parsing."""

    def __init__(self, tokenizer: Any, reply: str) -> None:
        self.reply = tokenizer(reply, add_special_tokens=False, return_tensors="pt")["input_ids"][0]
        self.device = torch.device("cpu")

    def generate(self, input_ids: Any, **kwargs: Any) -> Any:
        tail = self.reply.repeat(input_ids.shape[0], 1)
        return torch.cat([input_ids, tail], dim=1)


def test_reply_is_cut_at_end_of_turn_and_parsed(tokenizer: Any) -> None:
    reply = 'Sure. junk <tool_call>{"name": "mail_search", "arguments": {"query": "x"}}</tool_call>' + END_OF_TURN
    policy = TransformersPolicy(ScriptedLM(tokenizer, reply + "<start_of_turn>user\nmore"), tokenizer)
    messages = [
        SYSTEM,
        {"role": "user", "content": "find x"},
        CALL_TURN,
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]
    turn = policy.act(messages, [])
    assert turn.content == "Sure. junk"
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("call_2_0", "mail_search", {"query": "x"})]
    expected = len(tokenizer(reply, add_special_tokens=False)["input_ids"])
    assert turn.usage["completion_tokens"] == expected
    assert step_index(messages) == 2


def test_overfitted_tiny_model_emits_the_tool_call(tokenizer: Any, model: Any) -> None:
    conv = [SYSTEM, {"role": "user", "content": "find mail from bob"}, CALL_TURN]
    enc = tokenizer.apply_chat_template(
        conv, tokenize=True, return_dict=True, return_assistant_tokens_mask=True, return_tensors="pt"
    )
    labels = enc["input_ids"].clone()
    labels[enc["assistant_masks"] == 0] = -100
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(120):
        model(input_ids=enc["input_ids"], labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    turn = TransformersPolicy(model, tokenizer, max_new_tokens=40).act(conv[:2], [])
    assert turn.content == "Searching."
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("mail_search", {"query": "bob"})]


def test_load_hf_sets_the_project_template(tmp_path: Any, tokenizer: Any, model: Any) -> None:
    model.save_pretrained(tmp_path)
    tokenizer.chat_template = None
    tokenizer.padding_side = "right"
    tokenizer.save_pretrained(tmp_path)
    tokenizer.chat_template = CHAT_TEMPLATE
    loaded, tok = load_hf(str(tmp_path), dtype="float32", device="cpu")
    assert tok.chat_template == CHAT_TEMPLATE and tok.padding_side == "left"
    conv = ([SYSTEM, {"role": "user", "content": "hi"}], [])
    a = TransformersPolicy(model, tokenizer, max_new_tokens=6).act(*conv)
    b = TransformersPolicy(loaded, tok, max_new_tokens=6).act(*conv)
    assert a == b


@pytest.mark.slow
def test_embedded_model_loads_and_generates() -> None:
    """The one test that loads the real 270M model (~60 s on CPU)."""
    from coworkenv.agents.embedded import load_embedded

    model, tok = load_embedded(device="cpu")
    assert not getattr(model, "is_quantized", False) and getattr(model.config, "quantization_config", None) is None
    turn = TransformersPolicy(model, tok, max_new_tokens=4, name="embedded").act(
        [SYSTEM, {"role": "user", "content": "Say hello."}], []
    )
    assert 1 <= turn.usage["completion_tokens"] <= 4
