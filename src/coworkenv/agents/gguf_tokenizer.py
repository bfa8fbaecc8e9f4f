"""The Gemma tokenizer rebuilt from a GGUF file's own vocabulary, the same on every transformers version.

A GGUF file carries no ``tokenizer.json``: transformers converts its vocabulary, and the
conversion changed between versions. transformers 5.17 turns Gemma's vocabulary into a
Unigram model that splits ``user`` into ``us`` + ``er`` although ``user`` is one token
(a rendered conversation: 115 ids instead of 86), and a checkpoint saved from it reloads as a
merge-less BPE (290 ids). Gemma's tokenizer is SentencePiece BPE, so we build that BPE here
with the ``tokenizers`` library from the file's tokens: merges recovered from the vocabulary,
ranked by the order tokens appear in the file (Gemma's merge order), byte fallback, the
control tokens special. The result is a generic ``PreTrainedTokenizerFast`` that saves and
reloads as exactly this ``tokenizer.json`` — no class-specific rebuild on load.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
CONTROL, USER_DEFINED = 3, 4
SPACE = "\u2581"


class _Cursor:
    """Sequential little-endian reads over the file's bytes."""

    def __init__(self, buf: mmap.mmap) -> None:
        self.buf, self.pos = buf, 0

    def unpack(self, fmt: str) -> Any:
        value = struct.unpack_from(fmt, self.buf, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        n = self.unpack("<Q")
        text = bytes(self.buf[self.pos : self.pos + n]).decode("utf-8", errors="replace")
        self.pos += n
        return text

    def value(self, kind: int) -> object:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item, count = self.unpack("<I"), self.unpack("<Q")
            if item in _SCALARS:
                fmt = _SCALARS[item]
                size = struct.calcsize(fmt)
                values = list(struct.unpack_from(f"<{count}{fmt[1]}", self.buf, self.pos))
                self.pos += size * count
                return values
            return [self.value(item) for _ in range(count)]
        if kind not in _SCALARS:
            raise ValueError(f"unknown GGUF value type {kind}")
        return self.unpack(_SCALARS[kind])


def read_gguf_metadata(path: str | Path) -> dict[str, object]:
    """The key/value metadata of a GGUF file (v2/v3), without touching the tensors."""
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        cur = _Cursor(buf)
        if bytes(buf[:4]) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        cur.pos = 4
        version = cur.unpack("<I")
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is not supported")
        cur.unpack("<Q")  # tensor count
        meta: dict[str, object] = {}
        for _ in range(cur.unpack("<Q")):
            key = cur.string()
            meta[key] = cur.value(cur.unpack("<I"))
        return meta


def respell(tokens: list[str]) -> list[str]:
    """Tokens of two or more spaces are stored as spaces; the normalizer turns spaces into ``▁``."""
    return [SPACE * len(t) if " " in t and not t.strip() else t for t in tokens]


def recover_merges(tokens: list[str]) -> list[tuple[str, str]]:
    """Every split of a token into two vocabulary tokens, best (earliest in the file) first.

    SentencePiece BPE merges the pair whose result ranks highest; for Gemma the rank is the
    token's position in the vocabulary. Ties between splits of one token: longer left piece first.
    """
    index = {t: i for i, t in enumerate(tokens)}
    merges: list[tuple[int, int, int, int, str, str]] = []
    for rank, token in enumerate(tokens):
        local = []
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in index and right in index:
                local.append((index[left], index[right], left, right))
        local.sort()
        merges += [(rank, -len(left), -len(right), k, left, right) for k, (_, _, left, right) in enumerate(local)]
    merges.sort()
    return [(left, right) for *_, left, right in merges]


def build_gemma_tokenizer(meta: dict[str, Any]) -> PreTrainedTokenizerBase:
    """A ``PreTrainedTokenizerFast`` for a Gemma GGUF vocabulary (SentencePiece BPE with byte fallback)."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tokens = respell(list(meta["tokenizer.ggml.tokens"]))
    types = list(meta.get("tokenizer.ggml.token_type") or [])
    control = [t for t, k in zip(tokens, types, strict=False) if k == CONTROL]
    user = [t for t, k in zip(tokens, types, strict=False) if k == USER_DEFINED]
    special = {
        name: tokens[meta[f"tokenizer.ggml.{key}"]]
        for name, key in (
            ("bos_token", "bos_token_id"),
            ("eos_token", "eos_token_id"),
            ("unk_token", "unknown_token_id"),
            ("pad_token", "padding_token_id"),
        )
        if f"tokenizer.ggml.{key}" in meta
    }
    vocab = {t: i for i, t in enumerate(tokens)}
    bpe = models.BPE(
        vocab=vocab,
        merges=recover_merges(tokens),
        unk_token=special.get("unk_token"),
        fuse_unk=True,
        byte_fallback=True,
    )
    tok = Tokenizer(bpe)
    tok.normalizer = normalizers.Replace(" ", SPACE)
    tok.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous")
    tok.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in control])
    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in user])
    bos = special.get("bos_token")
    if bos is not None and meta.get("tokenizer.ggml.add_bos_token", True):
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, vocab[bos])]
        )
    return PreTrainedTokenizerFast(tokenizer_object=tok, **special)


def gemma_tokenizer_from_gguf(path: str | Path) -> PreTrainedTokenizerBase:
    """The faithful tokenizer of a Gemma GGUF file (any transformers version)."""
    meta = read_gguf_metadata(path)
    model = meta.get("tokenizer.ggml.model")
    if model not in ("llama", "gemma", "gemma3"):
        raise ValueError(f"{path}: tokenizer.ggml.model={model!r}, expected a SentencePiece (Gemma) vocabulary")
    return build_gemma_tokenizer(meta)
