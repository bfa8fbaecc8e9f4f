"""Supervised fine-tuning on curated demonstrations with TRL's SFTTrainer.

The data is TRL's conversational format (``{"messages", "tools"}``, as written by
``coworkenv data sft``); the tokenizer carries the project's chat template, whose
``{% generation %}`` blocks give TRL the assistant mask, so only the assistant's own
tokens (text, tool calls and the closing ``<end_of_turn>``) are learned. LoRA (PEFT) is
optional; bf16 mixed precision on GPU, the weights' own dtype on CPU. Loss and progress go to ``train_log.jsonl`` in the
output folder, which also receives the checkpoint (adapters merged). A validation split of the
demos (:mod:`coworkenv.train.selection`) is evaluated a few times; the weights kept are those
of the lowest validation loss.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.agents.chat_format import template_messages
from coworkenv.agents.models import merge_lora, save_checkpoint
from coworkenv.runs import TRAIN_LOG, TRAIN_SUMMARY
from coworkenv.storage import append_jsonl, atomic_write_json, read_jsonl
from coworkenv.train.roundtrip import check_round_trip
from coworkenv.train.selection import best_weights_callback, eval_interval, split_validation
from coworkenv.train.settings import SFTSettings

if TYPE_CHECKING:
    from peft import LoraConfig
    from transformers import (
        PreTrainedModel,
        PreTrainedTokenizerBase,
        TrainerCallback,
        TrainerControl,
        TrainerState,
        TrainingArguments,
    )
    from trl.trainer.sft_trainer import SFTTrainer

Progress = Callable[[int, int], None]


@dataclass
class SFTResult:
    model: PreTrainedModel
    out: Path
    steps: int
    first_loss: float | None
    last_loss: float | None
    seconds: float
    best: dict[str, object] | None = None
    """the validation loss and step of the kept weights (None without a validation split)."""


def load_sft_records(path: Path) -> list[dict[str, Any]]:
    """Conversational records from an SFT JSONL file (``messages`` and optional ``tools``)."""
    records = [r for r in read_jsonl(path) if r.get("messages")]
    if not records:
        raise ValueError(f"{path}: no SFT records with 'messages'")
    return records


def _dataset(records: list[dict[str, Any]]) -> Any:
    """A datasets.Dataset; tools travel as JSON text so Arrow does not merge their schemas."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()
    rows = [{"messages": _normalise(r["messages"]), "tools": json.dumps(r.get("tools") or [])} for r in records]
    return Dataset.from_list(rows)


def _normalise(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give every message the same keys and string tool arguments, as Arrow needs one schema."""
    out = []
    for m in template_messages(messages):
        calls = [
            {
                "id": c.get("id", ""),
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": a if isinstance(a := c["function"].get("arguments", "{}"), str) else json.dumps(a),
                },
            }
            for c in (m.get("tool_calls") or [])
        ]
        out.append(
            {
                "role": m["role"],
                "content": m.get("content") or "",
                "name": m.get("name") or "",
                "tool_call_id": m.get("tool_call_id") or "",
                "tool_calls": calls or None,
            }
        )
    return out


def _log_callback(log_path: Path, progress: Progress | None) -> TrainerCallback:
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import TrainerCallback

    class LogToRun(TrainerCallback):
        """Append each logged loss to the run's train log; drive the progress bar."""

        def on_log(
            self,
            args: TrainingArguments,
            state: TrainerState,
            control: TrainerControl,
            logs: dict[str, float] | None = None,
            **kw: object,
        ) -> None:
            if logs and "loss" in logs:
                rec = {"step": state.global_step, "loss": float(logs["loss"]), "epoch": float(logs.get("epoch", 0.0))}
                if "learning_rate" in logs:
                    rec["lr"] = float(logs["learning_rate"])
                append_jsonl(log_path, [rec])

        def on_step_end(
            self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kw: object
        ) -> None:
            if progress:
                progress(state.global_step, state.max_steps)

    return LogToRun()


def _config_kwargs(s: SFTSettings, folder: str, on_gpu: bool, eval_steps: int | None) -> dict[str, Any]:
    """SFTConfig arguments: assistant-only loss, cosine schedule, validation every ``eval_steps``."""
    return {
        "output_dir": folder,
        "num_train_epochs": s.epochs,
        "max_steps": s.max_steps,
        "learning_rate": s.learning_rate,
        "per_device_train_batch_size": s.batch_size,
        "per_device_eval_batch_size": s.batch_size,
        "gradient_accumulation_steps": s.grad_accum,
        "warmup_steps": s.warmup,
        "lr_scheduler_type": "cosine",
        "max_length": s.max_length,
        "assistant_only_loss": True,
        "bf16": on_gpu,  # mixed precision over fp32 master weights
        "use_cpu": not on_gpu,
        "gradient_checkpointing": False,
        "logging_steps": s.logging_steps,
        "eval_strategy": "steps" if eval_steps else "no",
        "eval_steps": eval_steps,
        "save_strategy": "no",  # the best weights are kept in memory, not in checkpoints
        "report_to": "none",
        "seed": s.seed,
        "disable_tqdm": True,
    }


def train_sft(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    records: list[dict[str, object]],
    out: Path,
    settings: SFTSettings | None = None,
    *,
    label: str = "sft",
    model_name: str = "",
    progress: Progress | None = None,
) -> SFTResult:
    """Fine-tune ``model`` on ``records`` and save the checkpoint and logs into ``out``."""
    s = settings or SFTSettings()
    out = Path(out)
    check_round_trip(tokenizer)  # refuse to train what could not be reloaded
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / TRAIN_LOG
    log_path.unlink(missing_ok=True)
    train, val = split_validation(records, s.val_fraction, s.seed)
    scratch = tempfile.TemporaryDirectory(prefix="coworkenv-sft-")  # the Trainer wants a folder; saves go to out
    trainer, keeper = _trainer(model, tokenizer, s, train, val, scratch.name, log_path, progress)
    start = time.perf_counter()
    with scratch:
        trainer.train()
        if val:
            trainer.evaluate()  # the end of the run competes too
    best = keeper.restore(trainer.model) if val else None
    seconds = round(time.perf_counter() - start, 2)
    trained = merge_lora(trainer.model)
    trained.eval()
    save_checkpoint(trained, tokenizer, out)
    losses = [r["loss"] for r in read_jsonl(log_path) if "loss" in r]
    result = SFTResult(
        trained,
        out,
        trainer.state.global_step,
        losses[0] if losses else None,
        losses[-1] if losses else None,
        seconds,
        best,
    )
    _write_summary(result, s, label=label, model_name=model_name, examples=len(records), validation=len(val))
    return result


def _trainer(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    s: SFTSettings,
    train: list[dict[str, object]],
    val: list[dict[str, object]],
    folder: str,
    log_path: Path,
    progress: Progress | None,
) -> tuple[SFTTrainer, Any]:
    """TRL's SFTTrainer over the train and validation demos (LoRA if asked), logging to the run's log;
    and the callback that keeps the weights of the lowest validation loss."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from transformers import PrinterCallback
    from trl.trainer.sft_config import SFTConfig
    from trl.trainer.sft_trainer import SFTTrainer

    on_gpu = next(model.parameters()).device.type == "cuda"
    every = eval_interval(len(train), s.batch_size, s.grad_accum, s.epochs, s.max_steps, s.evals) if val else None
    model.train()
    trainer = SFTTrainer(
        model=model,
        args=SFTConfig(**_config_kwargs(s, folder, on_gpu, every)),
        train_dataset=_dataset(train),
        eval_dataset=_dataset(val) if val else None,
        processing_class=tokenizer,
        peft_config=_lora_config(s) if s.lora else None,
        callbacks=[_log_callback(log_path, progress), keeper := best_weights_callback(log_path)],
    )
    trainer.remove_callback(PrinterCallback)  # the run's own log and progress bar replace its prints
    return trainer, keeper


def _lora_config(s: SFTSettings) -> LoraConfig:
    """PEFT's LoRA adapters on every linear layer (merged into the checkpoint after training)."""
    # lazy: an optional extra (train); the core and the CLI must run without it
    from peft import LoraConfig

    return LoraConfig(
        r=s.lora_r, lora_alpha=s.lora_alpha, target_modules="all-linear", lora_dropout=0.0, task_type="CAUSAL_LM"
    )


def _write_summary(
    result: SFTResult, s: SFTSettings, *, label: str, model_name: str, examples: int, validation: int
) -> None:
    """The run's ``train_summary.json``, which reports and ``coworkenv report`` read back."""
    atomic_write_json(
        result.out / TRAIN_SUMMARY,
        {
            "kind": "sft",
            "label": label,
            "model": model_name,
            "examples": examples,
            "validation": validation,
            "steps": result.steps,
            "first_loss": result.first_loss,
            "last_loss": result.last_loss,
            "best": result.best,
            "seconds": result.seconds,
            "created": time.time(),
            "settings": asdict(s),
        },
    )
