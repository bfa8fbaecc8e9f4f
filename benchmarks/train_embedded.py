"""Train and evaluate the embedded model on the environments: base -> SFT -> RL, held-out blueprints.

Stages, each writing into ``--out`` (a run folder that ``coworkenv report`` re-renders):
1. a bank (``--bank`` to reuse one, else synthesized into ``out/bank``), split by blueprint;
2. ``base/``: the start model evaluated on held-out environments;
3. ``sft/``: SFT (TRL) on oracle demonstrations of training environments, then evaluated;
4. ``grpo/<setting>/``: multi-turn RL from the SFT checkpoint, one run per ``--settings``
   entry (same bank, seed and start), each evaluated;
5. ``summary.json`` (printed) and ``report.html``.

Sized by flags. The defaults are meant for one GPU (fp32 weights, bf16 autocast; estimated
10–15 minutes on an H200, not yet measured). On CPU the smallest run that exercises every
stage of the embedded model took 22.5 minutes on 2 shared cores (SFT dominates, ~50 s a step;
with ``--lora`` ~32 s a step)::

    python benchmarks/train_embedded.py --device cpu --dtype bfloat16 --bank BANK --heldout-envs 4 \\
        --train-envs 8 --sft-epochs 2 --sft-lr 2e-4 --sft-batch 1 --grpo-steps 1 --envs-per-step 1 \\
        --group-size 2 --grpo-lr 2e-5 --max-new-tokens 64 --max-turns 8 --batch-size 8

and ``--model tiny`` runs the same pipeline on the randomly initialised test model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from coworkenv.agents import OracleTeacher
from coworkenv.data.sft import sft_example
from coworkenv.eval.metrics import MULTI_TURN
from coworkenv.eval.report import write_report
from coworkenv.eval.runner import EvalResult, evaluate_loaded
from coworkenv.rollout.sources import is_bank, load_specs
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec.models import TaskSpec
from coworkenv.storage import atomic_write_json
from coworkenv.train.grpo import GRPOSettings, Setting, run_grid
from coworkenv.train.models import load_model, pick_device
from coworkenv.train.sft import SFTSettings, train_sft


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--model", default="embedded", help="embedded | tiny | <checkpoint folder>")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default=None, help="weights' dtype (default fp32 + bf16 autocast on GPU); "
                   "bfloat16 speeds up CPU runs")
    p.add_argument("--out", type=Path, default=Path("runs/train_embedded"))
    p.add_argument("--bank", type=Path, default=None, help="existing bank folder (else synthesized)")
    p.add_argument("--bank-size", type=int, default=240, help="environments to synthesize when no --bank")
    p.add_argument("--workers", type=int, default=2, help="processes for bank synthesis")
    p.add_argument("--heldout-envs", type=int, default=48)
    p.add_argument("--train-envs", type=int, default=160, help="training environments (SFT demos and RL)")
    p.add_argument("--max-new-tokens", type=int, default=160)
    p.add_argument("--max-turns", type=int, default=None, help="cap on turns per episode (CPU budget)")
    p.add_argument("--batch-size", type=int, default=64, help="episodes played in lockstep")
    p.add_argument("--sft-epochs", type=float, default=3.0)
    p.add_argument("--sft-lr", type=float, default=None, help="default: 1e-3 with --lora, else 1e-4")
    p.add_argument("--sft-batch", type=int, default=8)
    p.add_argument("--max-length", type=int, default=3072)
    p.add_argument("--lora", action="store_true")
    p.add_argument("--settings", default="grpo/broadcast,grpo/checks",
                   help="RL settings (normaliser/credit or reward/normaliser/credit), comma-separated")
    p.add_argument("--grpo-steps", type=int, default=6)
    p.add_argument("--envs-per-step", type=int, default=8)
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--micro-batch", type=int, default=8, help="turns per forward pass in the RL update")
    p.add_argument("--grpo-lr", type=float, default=2e-6)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def spread(specs: list[TaskSpec], n: int) -> list[TaskSpec]:
    """``n`` specs taken round-robin over blueprints, so a small subset still covers many workflows."""
    by_bp: dict[str, list[TaskSpec]] = defaultdict(list)
    for s in specs:
        by_bp[s.provenance.blueprint or ""].append(s)
    queues = [by_bp[k] for k in sorted(by_bp)]
    out: list[TaskSpec] = []
    while len(out) < min(n, len(specs)):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


def get_bank(args: argparse.Namespace) -> Path:
    if args.bank is not None:
        return args.bank
    bank = args.out / "bank"
    if not is_bank(bank):
        from coworkenv.synth.bank import synthesize_bank

        synthesize_bank(bank, args.bank_size, seed=args.seed, workers=args.workers)
    return bank


def oracle_demos(specs: list[TaskSpec]) -> list[dict[str, Any]]:
    """SFT records from oracle runs that pass (the teacher stream of the pipeline)."""
    demos = []
    for spec in specs:
        traj = run_episode(Environment(spec), OracleTeacher())
        if traj.grade is not None and traj.grade.passed:
            demos.append(sft_example(traj.model_dump(mode="json")))
    return demos


def row(result: EvalResult) -> dict[str, Any]:
    m = result.metrics
    return {
        "score": m["overall"]["score"],
        "pass@1": m["overall"]["pass@1"],
        "multi_turn_score": m[MULTI_TURN]["score"],
        "multi_turn_pass@1": m[MULTI_TURN]["pass@1"],
        "tasks": m["overall"]["tasks"],
        "multi_turn_tasks": m[MULTI_TURN]["tasks"],
        "by_capability": {c: v["score"] for c, v in m["by_capability"].items()},
        **m["behaviour"],
        "seconds": result.seconds,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = pick_device(args.device)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        timings[name] = round(time.perf_counter() - clock, 1)
        clock = time.perf_counter()
        print(f"[{sum(timings.values()):7.1f}s] {name} done ({timings[name]}s)", flush=True)

    bank = get_bank(args)
    heldout = spread(load_specs(bank, "heldout"), args.heldout_envs)
    train = spread(load_specs(bank, "train"), args.train_envs)
    demos = oracle_demos(train)
    lap("bank")
    eval_kw = {"max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size, "max_turns": args.max_turns,
               "seed": args.seed, "split": "heldout", "bank": str(bank)}
    model, tokenizer = load_model(args.model, device, seed=args.seed, dtype=args.dtype)
    lap("load")
    stages = {"base": row(evaluate_loaded(model, tokenizer, heldout, out / "base", "base", model_name=args.model,
                                          **eval_kw))}
    lap("eval base")
    sft_lr = args.sft_lr or (1e-3 if args.lora else 1e-4)  # LoRA adapters want a larger rate
    sft = train_sft(model, tokenizer, demos, out / "sft",
                    SFTSettings(epochs=args.sft_epochs, learning_rate=sft_lr, batch_size=args.sft_batch,
                                max_length=args.max_length, lora=args.lora, seed=args.seed),
                    model_name=args.model)
    lap("sft")
    stages["sft"] = row(evaluate_loaded(sft.model, tokenizer, heldout, out / "sft", "sft", model_name="sft", **eval_kw))
    lap("eval sft")
    del model, sft

    grid = [Setting.parse(s) for s in args.settings.split(",")]
    settings = GRPOSettings(steps=args.grpo_steps, envs_per_step=args.envs_per_step, group_size=args.group_size,
                            learning_rate=args.grpo_lr, max_new_tokens=args.max_new_tokens, max_turns=args.max_turns,
                            micro_batch=args.micro_batch, max_length=args.max_length, seed=args.seed)

    def after(setting: Setting, result: Any, tok: Any) -> None:
        label = f"grpo {setting.name}"
        stages[label] = row(evaluate_loaded(result.model, tok, heldout, result.out, label, **eval_kw))
        stages[label]["train_reward"] = [result.log[0]["reward"], result.log[-1]["reward"]]
        lap(f"grpo + eval {setting.name}")

    run_grid(lambda: load_model(str(out / "sft"), device, dtype=args.dtype), train, out / "grpo", grid, settings,
             model_name="sft", after=after)

    base, tuned = stages["base"], stages["sft"]
    rl = {k: v for k, v in stages.items() if k.startswith("grpo")}
    summary = {
        "model": args.model,
        "device": device,
        "sizes": {"heldout_envs": len(heldout), "train_envs": len(train), "sft_demos": len(demos),
                  "max_new_tokens": args.max_new_tokens, "max_turns": args.max_turns, "grpo_steps": args.grpo_steps,
                  "envs_per_step": args.envs_per_step, "group_size": args.group_size},
        "stages": stages,
        "gains": {
            "sft_pass@1": round(tuned["pass@1"] - base["pass@1"], 2),
            "sft_score": round(tuned["score"] - base["score"], 2),
            "sft_multi_turn_score": round(tuned["multi_turn_score"] - base["multi_turn_score"], 2),
            "rl_best_score_over_sft": round(max(v["score"] for v in rl.values()) - tuned["score"], 2) if rl else None,
        },
        "seconds": timings,
    }
    g = summary["gains"]
    summary["targets"] = {
        "sft_lifts_pass@1_by_20": g["sft_pass@1"] >= 20,
        "multi_turn_gain_at_least_average": 0 < g["sft_multi_turn_score"] >= g["sft_score"],
        "rl_adds_on_sft": bool(rl) and g["rl_best_score_over_sft"] > 0,
    }
    atomic_write_json(out / "summary.json", summary)
    report = write_report(out, title=f"{args.model} on held-out blueprints ({device})")
    print(json.dumps({k: summary[k] for k in ("sizes", "gains", "targets", "seconds")}, indent=2))
    for name, s in stages.items():
        print(f"{name:28s} score {s['score']:5.1f}  pass@1 {s['pass@1']:5.1f}  multi-turn {s['multi_turn_score']:5.1f}"
              f"  valid calls {s['valid_calls']:5.1f}%  caps {json.dumps(s['by_capability'])}")
    print(f"report: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
