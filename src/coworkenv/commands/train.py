"""CLI commands for the train stage: ``coworkenv train sft`` and ``coworkenv train grpo``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from coworkenv.rollout.policies import LOCAL_SPECS, check_local_model
from coworkenv.train.settings import DEFAULT_GRID, GRPOSettings, Setting, SFTSettings

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from coworkenv.spec.models import TaskSpec
    from coworkenv.train.grpo import GRPOResult

SFT = SFTSettings()
GRPO = GRPOSettings()
"""The trainer's defaults, shown and used by ``train sft`` as they are."""
MODEL_HELP = LOCAL_SPECS
DTYPE_HELP = "weights' dtype, e.g. bfloat16 (faster on CPUs with bf16); default fp32 with bf16 autocast on GPU"


def _steps_bar(bar: Progress, label: str) -> Callable[[int, int], None]:
    """A progress-bar task driven by (step, total) callbacks from the trainers."""
    task = bar.add_task(label, total=None)

    def update(step: int, total: int) -> None:
        bar.update(task, completed=step, total=total)

    return update


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the main app."""
    train = typer.Typer(no_args_is_help=True, help="Train a model on the environments: SFT and multi-turn RL.")
    app.add_typer(train, name="train")
    train.command("sft")(sft)
    train.command("grpo")(grpo)


def sft(
    model: str = typer.Option(..., "--model", help=MODEL_HELP),
    data: Path = typer.Option(..., "--data", help="SFT dataset folder from `coworkenv export sft` (or its sft.jsonl)"),
    out: Path = typer.Option(..., "--out", help="checkpoint folder (also gets train_log.jsonl)"),
    lora: bool = typer.Option(False, "--lora", help="train LoRA adapters (merged into the saved checkpoint)"),
    epochs: float = typer.Option(SFT.epochs, min=0.0),
    max_steps: int = typer.Option(SFT.max_steps, "--max-steps", help="stop after this many steps (-1: epochs decide)"),
    lr: float = typer.Option(SFT.learning_rate, "--lr", min=0.0),
    batch_size: int = typer.Option(SFT.batch_size, "--batch-size", min=1),
    grad_accum: int = typer.Option(SFT.grad_accum, "--grad-accum", min=1),
    max_length: int = typer.Option(SFT.max_length, "--max-length", min=16),
    val_fraction: float = typer.Option(
        SFT.val_fraction,
        "--val-fraction",
        min=0.0,
        max=0.5,
        help="demos held out; the checkpoint is the lowest validation loss",
    ),
    device: str = typer.Option("auto", help="auto | cpu | cuda"),
    dtype: str | None = typer.Option(None, help=DTYPE_HELP),
    seed: int = typer.Option(SFT.seed),
) -> None:
    """Supervised fine-tuning with TRL's SFTTrainer, loss on the assistant's tokens only."""
    from coworkenv.agents.models import load_model
    from coworkenv.train.sft import load_sft_records, train_sft

    console = Console()
    _check_model(console, model)
    data = _sft_file(console, data)
    records = load_sft_records(data)
    net, tokenizer = load_model(model, device, seed=seed, dtype=dtype)
    settings = SFTSettings(
        epochs=epochs,
        max_steps=max_steps,
        learning_rate=lr,
        batch_size=batch_size,
        grad_accum=grad_accum,
        max_length=max_length,
        lora=lora,
        seed=seed,
        val_fraction=val_fraction,
    )
    with Progress(console=console) as bar:
        progress = _steps_bar(bar, f"sft on {len(records)} demos")
        result = train_sft(net, tokenizer, records, out, settings, model_name=model, progress=progress)
    kept = result.best
    best = f", kept step {kept['step']} (validation loss {kept['eval_loss']:.3f})" if kept else ""
    console.print(
        f"{result.steps} steps in {result.seconds:.0f}s, loss {result.first_loss:.3f} -> "
        f"{result.last_loss:.3f}{best}; checkpoint {out}"
    )


def _check_model(console: Console, model: str) -> None:
    """Exit 2 before anything loads when ``--model`` names no local model or its extra is not installed."""
    try:
        check_local_model(model)
    except ValueError as exc:
        console.print(f"[red]--model: {escape(str(exc))}[/red]")
        raise typer.Exit(2) from None


def _sft_file(console: Console, data: Path) -> Path:
    """The dataset's JSONL (a folder from `export sft` holds it); a missing one says how to make it."""
    if data.is_dir():
        data = data / "sft.jsonl"
    if not data.is_file():
        console.print(f"[red]{data} does not exist: make it with `coworkenv export sft RUNS --out FOLDER`[/red]")
        raise typer.Exit(2)
    return data


def grpo(
    model: str = typer.Option(..., "--model", help=MODEL_HELP),
    bank: Path = typer.Option(..., "--bank", help="bank folder"),
    out: Path = typer.Option(..., "--out", help="checkpoint folder (a grid gets one sub-folder per setting)"),
    split: str = typer.Option("train", help="bank split to train on; 'all' for every spec (spec folders)"),
    reward: str = typer.Option(GRPO.setting.reward, help="raw | binary | safety_gated"),
    normaliser: str = typer.Option(GRPO.setting.normaliser, help="none (raw) | grpo (group-normalised) | rloo"),
    credit: str = typer.Option(GRPO.setting.credit, help="broadcast (trajectory) | discounted (per-turn) | checks"),
    grid: str | None = typer.Option(None, help="'default', or comma-separated normaliser/credit settings"),
    steps: int = typer.Option(GRPO.steps, min=1),
    envs_per_step: int = typer.Option(GRPO.envs_per_step, "--envs-per-step", min=1),
    group_size: int = typer.Option(GRPO.group_size, "--group-size", min=1, help="episodes per environment (K)"),
    lr: float = typer.Option(GRPO.learning_rate, "--lr", min=0.0),
    temperature: float = typer.Option(GRPO.temperature, min=0.0),
    max_new_tokens: int = typer.Option(GRPO.max_new_tokens, "--max-new-tokens", min=1),
    max_turns: int | None = typer.Option(None, "--max-turns", min=1, help="cap on turns per episode"),
    gamma: float = typer.Option(GRPO.gamma, min=0.0, max=1.0, help="discount of per-turn credit"),
    kl: float = typer.Option(GRPO.kl_coef, "--kl", min=0.0, help="KL penalty to the start model"),
    eval_samples: int = typer.Option(0, "--eval-samples", min=0, help="evaluate on held-out after training"),
    tools: str = typer.Option("all", "--tools", help="tools each prompt offers: all | spec | spec+N"),
    device: str = typer.Option("auto", help="auto | cpu | cuda"),
    dtype: str | None = typer.Option(None, help=DTYPE_HELP),
    seed: int = typer.Option(GRPO.seed),
) -> None:
    """Multi-turn RL with the environment in the loop; a grid compares settings on the same bank and seed."""
    from coworkenv.agents.models import load_model

    console = Console()
    _check_model(console, model)
    settings, specs, heldout = _grpo_inputs(
        console, bank, split, tools, (reward, normaliser, credit), grid, eval_samples
    )
    base = GRPOSettings(
        steps=steps,
        envs_per_step=envs_per_step,
        group_size=group_size,
        learning_rate=lr,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        max_turns=max_turns,
        gamma=gamma,
        kl_coef=kl,
        seed=seed,
    )
    _train_grid(
        console,
        lambda: load_model(model, device, seed=seed, dtype=dtype),
        specs,
        out,
        settings,
        base,
        nested=grid is not None,
        model_name=model,
        after=_heldout_eval(heldout, eval_samples, max_new_tokens, seed, model, bank),
    )


def _grpo_inputs(
    console: Console,
    bank: Path,
    split: str,
    tools: str,
    schemes: tuple[str, str, str],
    grid: str | None,
    eval_samples: int,
) -> tuple[list[Setting], list[TaskSpec], list[TaskSpec]]:
    """The settings to train, the training specs and the held-out ones, or exit 2 saying what is wrong
    before any model loads: held-out evaluation without a bank, a bad scheme or grid, an unreadable
    bank, imported evaluation-only tasks."""
    from coworkenv.agents.tool_menu import narrow_tools
    from coworkenv.bank.sources import load_specs
    from coworkenv.data.rl import checked_schemes
    from coworkenv.spec.models import refuse_evaluation_only

    if eval_samples and split == "all":
        console.print("[red]--eval-samples needs a bank and its held-out split[/red]")
        raise typer.Exit(2)
    reward = schemes[0]
    try:
        settings = (
            [Setting(*checked_schemes(*schemes))]
            if grid is None
            else (list(DEFAULT_GRID) if grid == "default" else [Setting.parse(g, reward) for g in grid.split(",")])
        )
        specs = [narrow_tools(s, tools) for s in load_specs(bank, None if split == "all" else split)]
        heldout = [narrow_tools(s, tools) for s in load_specs(bank, "heldout")] if eval_samples else []
        refuse_evaluation_only(specs, str(bank))
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from None
    return settings, specs, heldout


def _heldout_eval(
    heldout: list[TaskSpec], samples: int, max_new_tokens: int, seed: int, model: str, bank: Path
) -> Callable[[Setting, GRPOResult, PreTrainedTokenizerBase], None]:
    """What runs after each setting trains, while its model is still loaded: the held-out evaluation
    (nothing without --eval-samples)."""
    from coworkenv.eval.runner import evaluate_loaded

    def after(setting: Setting, result: GRPOResult, tokenizer: PreTrainedTokenizerBase) -> None:
        if heldout:
            evaluate_loaded(
                result.model,
                tokenizer,
                heldout,
                result.out,
                f"grpo {setting.name}",
                samples=samples,
                max_new_tokens=max_new_tokens,
                seed=seed,
                model_name=model,
                split="heldout",
                bank=str(bank),
            )

    return after


def _train_grid(
    console: Console,
    load: Callable[[], tuple[Any, PreTrainedTokenizerBase]],
    specs: list[TaskSpec],
    out: Path,
    settings: list[Setting],
    base: GRPOSettings,
    *,
    nested: bool,
    model_name: str,
    after: Callable[[Setting, GRPOResult, PreTrainedTokenizerBase], None],
) -> None:
    """Train every setting under its own progress bar, then print each one's reward change and
    write the run's report."""
    from coworkenv.eval.report import write_report
    from coworkenv.train.grpo import run_grid

    with Progress(console=console) as bar:
        bars = {s: bar.add_task(f"grpo {s.name}", total=base.steps) for s in settings}
        results = run_grid(
            load,
            specs,
            out,
            settings,
            base,
            nested=nested,
            model_name=model_name,
            after=after,
            progress=lambda s, i, n: bar.update(bars[s], completed=i),
        )
    for s, r in zip(settings, results, strict=True):
        console.print(
            f"{s.name}: reward {r.log[0]['reward']:.3f} -> {r.log[-1]['reward']:.3f} in {r.seconds:.0f}s -> {r.out}"
        )
    console.print(f"report: {write_report(out)}")
