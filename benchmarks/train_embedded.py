"""Train and evaluate the embedded model on the environments: base -> SFT -> RL, three evaluation sets.

Stages (``--stages``, default all), each writing into ``--out`` as soon as it ends, so a run
cut short still reports what it finished (``summary.json`` is rewritten after every stage):
1. a bank (``--bank`` to reuse one, else synthesized into ``out/bank``), split by blueprint into
   SFT demos and ``instances`` (new seeds of the training blueprints) on one side and
   ``heldout_blueprints`` on the other; ``examples`` are the hand-written specs of ``examples/``;
2. ``base``: the start model on the three sets (one lockstep batch; ``--base-max-turns``);
3. ``sft``: SFT (TRL) on oracle demos with a validation split (the best checkpoint is kept),
   evaluated, and the saved checkpoint's first turns compared with the model in memory;
4. ``grpo``: multi-turn RL from the saved SFT checkpoint, one run per ``--settings`` entry.
``--stages grpo`` resumes from ``out/sft`` of an earlier run. ``summary.json`` holds
``stages.<stage>.<set>`` for the sets ``instances``, ``heldout_blueprints``, ``examples``, each
with ``score``, ``pass@1``, ``multi_turn_score``, ``do_nothing_score``, ``calls_per_episode`` and
``valid_calls``, plus decode throughput, training curves and timings.

SFT trains on a demo mix (:mod:`coworkenv.data.demo_mix`): ``--menu-variants`` menus per
environment, ``--multi-turn-weight`` times as many for multi-turn ones (``sizes.sft_mix``).

Sizing for one H200 under 8 minutes, from the last run's timings (GGUF load 41 s; SFT 136
steps of ~1,476-token demos in 64 s; evaluation 107 s for 110 episodes, ≈ 3.5 s + 0.05 s per
episode per lockstep turn; RL 53 s per step of 16 episodes): ``--stages sft,grpo`` loads in
~41 s, mixes 850 demos in ~5 s, trains SFT for ~144 steps of ~1,320 tokens (~60 s), evaluates 78
episodes (~90 s) and checks the reload (~10 s), so RL starts at ~3.5 minutes; ``--budget-seconds
450`` then gives each of the two settings an equal share of what is left, less one evaluation,
which is ~1–2 steps of 8 environments × group 4 at 10 turns (~55 s each). Evaluation is what
the budget goes to: a setting needs ~55 s more per further step. ``--model tiny --smoke`` runs
every stage at the smallest size on CPU (~1 minute of CPU time).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from coworkenv.agents.models import load_model, pick_device
from coworkenv.agents.tool_menu import narrow_tools, parse_menu
from coworkenv.bank.sources import is_bank, load_specs
from coworkenv.data.demo_mix import MixSettings, composition, oracle_mix
from coworkenv.eval.report import write_report
from coworkenv.eval.sets import evaluate_sets, floors
from coworkenv.runtime import Environment
from coworkenv.spec.models import TaskSpec
from coworkenv.storage import atomic_write_json
from coworkenv.train.grpo import run_grid
from coworkenv.train.settings import GRPOSettings, Setting
from coworkenv.train.sft import SFTSettings, train_sft

STAGES = ("base", "sft", "grpo")
SETS = ("instances", "heldout_blueprints", "examples")
SMOKE = {
    "bank_size": 48,
    "instances": 2,
    "heldout_envs": 2,
    "examples_n": 2,
    "train_envs": 6,
    "max_new_tokens": 12,
    "max_turns": 2,
    "base_max_turns": 1,
    "sft_epochs": 1.0,
    "menu_variants": 2,
    "multi_turn_weight": 2,
    "sft_batch": 2,
    "grpo_steps": 1,
    "envs_per_step": 1,
    "group_size": 2,
    "settings": "grpo/checks",
    "max_length": 1024,
    "decode_bench": 4,
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="embedded", help="embedded | tiny | <checkpoint folder>")
    p.add_argument("--smoke", action="store_true", help="every stage at the smallest size (CPU, ~1 min with tiny)")
    p.add_argument("--stages", default=",".join(STAGES), help="comma-separated subset of base,sft,grpo")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default=None, help="weights' dtype (default fp32; evaluation decodes a bf16 copy on GPU)")
    p.add_argument("--out", type=Path, default=Path("runs/train_embedded"))
    p.add_argument("--bank", type=Path, default=None, help="existing bank folder (else synthesized)")
    p.add_argument("--bank-size", type=int, default=480, help="environments to synthesize when no --bank")
    p.add_argument("--workers", type=int, default=8, help="processes for bank synthesis")
    p.add_argument("--examples", type=Path, default=Path("examples"), help="hand-written specs (skipped if absent)")
    p.add_argument("--examples-n", type=int, default=None, help="at most this many examples")
    p.add_argument("--instances", type=int, default=32, help="new seeds of training blueprints to evaluate")
    p.add_argument("--heldout-envs", type=int, default=32)
    p.add_argument("--train-envs", type=int, default=300, help="training environments (SFT demos and RL)")
    p.add_argument("--tools", default="spec+2", help="tools a prompt offers: spec | spec+N | all")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--max-turns", type=int, default=12, help="cap on turns per evaluated episode (oracle: 5-11)")
    p.add_argument("--base-max-turns", type=int, default=2, help="turn cap of the base model's evaluation")
    p.add_argument("--cache", default=None, help="generation cache (e.g. static); default: transformers' dynamic")
    p.add_argument("--decode-bench", type=int, default=16, help="new tokens of the decode benchmark (0: skip)")
    p.add_argument("--menu-variants", type=int, default=2, help="SFT demos per environment, each its own menu")
    p.add_argument("--multi-turn-weight", type=int, default=2, help="multi-turn environments get this many times more")
    p.add_argument("--sft-epochs", type=float, default=1.5)
    p.add_argument("--sft-lr", type=float, default=None, help="default: 1e-3 with --lora, else 1e-4")
    p.add_argument("--sft-batch", type=int, default=8)
    p.add_argument("--val-fraction", type=float, default=0.1, help="demos held out for model selection")
    p.add_argument("--max-length", type=int, default=3072)
    p.add_argument("--lora", action="store_true")
    p.add_argument(
        "--settings",
        default="grpo/broadcast,grpo/checks",
        help="RL settings (normaliser/credit or reward/normaliser/credit), comma-separated",
    )
    p.add_argument("--grpo-steps", type=int, default=8, help="at most this many (see --budget-seconds)")
    p.add_argument("--envs-per-step", type=int, default=8)
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--grpo-max-turns", type=int, default=10, help="turn cap of RL episodes")
    p.add_argument("--micro-batch", type=int, default=8, help="turns per forward pass in the RL update")
    p.add_argument("--grpo-lr", type=float, default=2e-5)
    p.add_argument(
        "--budget-seconds",
        type=float,
        default=0,
        help="end every RL setting's training in time for its evaluation within this run time (0: no limit)",
    )
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.smoke:
        defaults = {a.dest: a.default for a in p._actions}
        for key, value in SMOKE.items():
            if getattr(args, key) == defaults[key]:
                setattr(args, key, value)
    args.stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    if bad := [s for s in args.stages if s not in STAGES]:
        p.error(f"--stages: unknown {bad}; expected a subset of {','.join(STAGES)}")
    parse_menu(args.tools)
    return args


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
        from coworkenv.bank.store import synthesize_bank

        synthesize_bank(bank, args.bank_size, seed=args.seed, workers=args.workers)
    return bank


def build_sets(args: argparse.Namespace, bank: Path) -> tuple[dict[str, list[TaskSpec]], list[TaskSpec]]:
    """The three evaluation sets, with the ``--tools`` menu applied, and the training environments as banked.

    ``instances`` take the first seeds of each training blueprint; training takes the others.
    Training specs keep every tool of their services: the demo mix draws its menus from them,
    and RL narrows them to the evaluation menu.
    """
    train_pool = load_specs(bank, "train")
    instances = spread(train_pool, args.instances)
    taken = {s.id for s in instances}
    train = spread([s for s in train_pool if s.id not in taken], args.train_envs)
    examples = load_specs(args.examples) if args.examples.is_dir() else []
    sets = {
        "instances": instances,
        "heldout_blueprints": spread(load_specs(bank, "heldout"), args.heldout_envs),
        "examples": examples[: args.examples_n] if args.examples_n is not None else examples,
    }
    menu = args.tools
    return {k: [narrow_tools(s, menu) for s in v] for k, v in sets.items() if v}, train


def demo_lengths(tokenizer: Any, demos: list[dict[str, Any]]) -> dict[str, float]:
    """Rendered demo length in tokens (what SFT trains on and what prompts cost)."""
    from coworkenv.agents.chat_format import CHAT_TEMPLATE, template_messages

    if not demos:
        return {}
    texts = [
        tokenizer.apply_chat_template(
            template_messages(d["messages"]), tools=d["tools"], chat_template=CHAT_TEMPLATE, tokenize=False
        )
        for d in demos
    ]
    lengths = sorted(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])
    return {
        "demos": len(lengths),
        "mean_tokens": round(sum(lengths) / len(lengths), 1),
        "median_tokens": lengths[len(lengths) // 2],
        "max_tokens": lengths[-1],
    }


class Run:
    """The run's summary, rewritten after every stage; an earlier run's stages are kept (resume)."""

    def __init__(self, args: argparse.Namespace, device: str) -> None:
        self.args, self.device, self.out = args, device, args.out
        self.start = self.clock = time.perf_counter()
        path = self.out / "summary.json"
        old = json.loads(path.read_text()) if path.exists() else {}
        self.summary: dict[str, Any] = {
            "model": args.model,
            "device": device,
            "stages": old.get("stages", {}),
            "training": old.get("training", {}),
            "seconds": old.get("seconds", {}),
        }

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.summary["seconds"][name] = round(now - self.clock, 1)
        self.clock = now
        print(f"[{sum(self.summary['seconds'].values()):7.1f}s] {name} ({self.summary['seconds'][name]}s)", flush=True)
        self.save()

    def save(self) -> None:
        self.summary["gains"] = gains(self.summary["stages"])
        atomic_write_json(self.out / "summary.json", self.summary)

    def stage(self, name: str, result: dict[str, Any]) -> None:
        self.summary["stages"][name] = result
        for set_name in SETS:
            if (row := result.get(set_name)) is not None:
                print(
                    f"  {name:24s} {set_name:19s} score {row['score']:5.1f} (floor {row['do_nothing_score']:5.1f})"
                    f"  pass@1 {row['pass@1']:5.1f}  multi-turn {row['multi_turn_score']:5.1f}"
                    f"  calls/ep {row['calls_per_episode']:5.2f}  valid {row['valid_calls']:5.1f}%",
                    flush=True,
                )
        print(f"  decode: {json.dumps(result.get('decode', {}))}", flush=True)


def gains(stages: dict[str, Any]) -> dict[str, Any]:
    """SFT over base and the best RL setting over SFT, per set."""
    out: dict[str, Any] = {}
    base, sft = stages.get("base", {}), stages.get("sft", {})
    rl = {k: v for k, v in stages.items() if k.startswith("grpo")}
    for name in SETS:
        if name in base and name in sft:
            b, s = base[name], sft[name]
            out[f"sft_{name}"] = {k: round(s[k] - b[k], 2) for k in ("score", "pass@1", "multi_turn_score")}
        if name in sft and any(name in v for v in rl.values()):
            out[f"rl_best_{name}"] = round(
                max(v[name]["score"] for v in rl.values() if name in v) - sft[name]["score"], 2
            )
    return out


def first_turn_agreement(a: tuple[Any, Any], b: tuple[Any, Any], specs: list[TaskSpec], max_new_tokens: int) -> float:
    """The share of first turns the two (model, tokenizer) pairs write identically, greedy.

    The saved checkpoint against the model in memory: anything below 100 % means the
    checkpoint is not the model that was trained (the defect that once sent RL a broken model).
    """
    from coworkenv.agents.models import autocast, inference_weights
    from coworkenv.eval.runner import local_policy

    items = [([*env.messages], obs.tools) for env in (Environment(s) for s in specs) for obs in [env.reset()]]
    texts = []
    for model, tok in (a, b):
        infer = inference_weights(model)
        with autocast(infer):
            texts.append(
                [
                    t.model_dump()
                    for t in local_policy(infer, tok, "reload", max_new_tokens=max_new_tokens).act_batch(items)
                ]
            )
    same = sum(x == y for x, y in zip(*texts, strict=True))
    return round(100.0 * same / max(1, len(items)), 2)


def decode_bench(
    model: Any, tokenizer: Any, specs: list[TaskSpec], new_tokens: int, cache: str | None = None
) -> dict[str, Any]:
    """Decode throughput of the first turns of ``specs`` in one batch, for each way of generating.

    fp32 weights under autocast (how evaluation used to run), a bf16 copy, and, when ``cache``
    names one (``--cache static``), a bf16 copy with that cache, each up to ``new_tokens``
    steps (rates are per decode step, so a batch that stops early still compares). A static
    cache recompiles for every batch shape (43 tokens/s against 1,538 on an H200), which is
    why it is measured only when asked for. A variant that fails records its error.
    """
    import torch

    from coworkenv.agents.chat_format import render_prompt
    from coworkenv.agents.models import autocast, inference_weights
    from coworkenv.agents.transformers_policy import TransformersPolicy

    prompts = [
        render_prompt(tokenizer, [*env.messages], obs.tools)
        for env in (Environment(s) for s in specs)
        for obs in [env.reset()]
    ]
    variants = {
        "fp32_autocast": (model, None),
        "bf16": (inference_weights(model), None),
    }
    if cache is not None:
        variants[f"bf16_{cache}_cache"] = (inference_weights(model), cache)
    out: dict[str, Any] = {"prompts": len(prompts), "new_tokens": new_tokens}
    for name, (weights, cache) in variants.items():
        policy = TransformersPolicy(weights, tokenizer, max_new_tokens=new_tokens, cache=cache)
        try:
            with autocast(weights):
                policy.generate(prompts[:2])  # warm-up (kernels, cache allocation)
                policy.decode = type(policy.decode)()
                policy.generate(prompts)
            out[name] = policy.decode.summary()
        except Exception as exc:  # a variant this stack cannot run is reported, not fatal
            out[name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return out


def run_sft(run: Run, model: Any, tokenizer: Any, demos: list[dict[str, Any]]) -> Any:
    a = run.args
    lr = a.sft_lr or (1e-3 if a.lora else 1e-4)  # LoRA adapters want a larger rate
    sft = train_sft(
        model,
        tokenizer,
        demos,
        a.out / "sft",
        SFTSettings(
            epochs=a.sft_epochs,
            learning_rate=lr,
            batch_size=a.sft_batch,
            max_length=a.max_length,
            lora=a.lora,
            seed=a.seed,
            val_fraction=a.val_fraction,
        ),
        model_name=a.model,
    )
    from coworkenv.storage import read_jsonl

    log = list(read_jsonl(a.out / "sft" / "train_log.jsonl"))
    run.summary["training"]["sft"] = {
        "steps": sft.steps,
        "first_loss": sft.first_loss,
        "last_loss": sft.last_loss,
        "best": sft.best,
        "validation_curve": [[r["step"], r["eval_loss"]] for r in log if "eval_loss" in r],
        "seconds": sft.seconds,
    }
    run.lap("sft train")
    return sft.model


def run_grpo(run: Run, train: list[TaskSpec], sets: dict[str, list[TaskSpec]], eval_kw: dict[str, Any]) -> None:
    a = run.args
    grid = [Setting.parse(s) for s in a.settings.split(",")]
    settings = GRPOSettings(
        steps=a.grpo_steps,
        envs_per_step=a.envs_per_step,
        group_size=a.group_size,
        learning_rate=a.grpo_lr,
        max_new_tokens=a.max_new_tokens,
        max_turns=a.grpo_max_turns,
        micro_batch=a.micro_batch,
        max_length=a.max_length,
        seed=a.seed,
    )

    def after(setting: Setting, result: Any, tok: Any) -> None:
        label = f"grpo {setting.name}"
        run.summary["training"][label] = {
            "reward_curve": [r["reward"] for r in result.log],
            "pass_rate_curve": [r["pass_rate"] for r in result.log],
            "groups_with_spread": [r["groups_with_spread"] for r in result.log],
            "steps": len(result.log),
            "episodes_per_step": a.envs_per_step * a.group_size,
            "seconds": result.seconds,
        }
        run.lap(f"{label} train")
        run.stage(label, evaluate_sets(result.model, tok, sets, result.out, label, **eval_kw))
        run.lap(f"{label} eval")

    run_grid(
        lambda: load_model(str(a.out / "sft"), run.device, dtype=a.dtype),
        train,
        a.out / "grpo",
        grid,
        settings,
        model_name="sft",
        after=after,
        deadline=rl_deadlines(run, len(grid)),
    )


def rl_deadlines(run: Run, settings: int) -> Any:
    """Setting i's training deadline: an equal share of the budget left, less one evaluation.

    An evaluation is assumed to take as long as the SFT one did (this run's, or the resumed run's).
    """
    if not run.args.budget_seconds:
        return None
    end = run.start + run.args.budget_seconds
    evaluation = run.summary["seconds"].get("sft eval", 0.0)

    def deadline(i: int) -> float:
        now = time.perf_counter()
        return now + (end - now) / (settings - i) - evaluation

    return deadline


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    device = pick_device(args.device)
    args.out.mkdir(parents=True, exist_ok=True)
    run = Run(args, device)
    bank = get_bank(args)
    sets, train = build_sets(args, bank)
    floor = floors(sets, seed=args.seed, max_turns=args.max_turns)
    mix = MixSettings(args.tools, args.menu_variants, args.multi_turn_weight)
    demos = oracle_mix(train, mix) if "sft" in args.stages else []
    run.summary["sizes"] = {
        **{k: len(v) for k, v in sets.items()},
        "train_envs": len(train),
        "sft_demos": len(demos),
        "sft_mix": composition(demos),
        "tools": args.tools,
        "max_new_tokens": args.max_new_tokens,
        "max_turns": args.max_turns,
        "grpo_steps": args.grpo_steps,
        "envs_per_step": args.envs_per_step,
        "group_size": args.group_size,
    }
    run.lap("bank")
    eval_kw = {
        "max_new_tokens": args.max_new_tokens,
        "max_turns": args.max_turns,
        "seed": args.seed,
        "cache": args.cache,
        "floor": floor,
    }
    if "base" in args.stages or "sft" in args.stages:
        model, tokenizer = load_model(args.model, device, seed=args.seed, dtype=args.dtype)
        run.summary["sizes"]["demo_length"] = demo_lengths(tokenizer, demos)
        run.lap("load")
        if args.decode_bench:
            run.summary["decode_bench"] = decode_bench(
                model, tokenizer, [s for v in sets.values() for s in v], args.decode_bench, args.cache
            )
            print(f"  decode bench: {json.dumps(run.summary['decode_bench'])}", flush=True)
            run.lap("decode bench")
        if "base" in args.stages:
            run.stage(
                "base",
                evaluate_sets(
                    model, tokenizer, sets, args.out / "base", "base", **{**eval_kw, "max_turns": args.base_max_turns}
                ),
            )
            run.lap("base eval")
        if "sft" in args.stages:
            model = run_sft(run, model, tokenizer, demos)
            run.stage("sft", evaluate_sets(model, tokenizer, sets, args.out / "sft", "sft", **eval_kw))
            run.lap("sft eval")
            first = [s for v in sets.values() for s in v]
            reloaded = load_model(str(args.out / "sft"), device, dtype=args.dtype)
            run.summary["stages"]["sft"]["reload_first_turn_agreement"] = first_turn_agreement(
                (model, tokenizer), reloaded, first, args.max_new_tokens
            )
            del reloaded
            run.lap("sft reload check")
        del model
    if "grpo" in args.stages:
        run_grpo(run, [narrow_tools(s, args.tools) for s in train], sets, eval_kw)
    write_report(args.out, title=f"{args.model}: base, SFT and RL on three evaluation sets ({device})")
    print(json.dumps({k: run.summary.get(k) for k in ("sizes", "gains", "seconds")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
