"""The HTML report of a run folder: tables and embedded plots, one self-contained file.

Figures are embedded as base64 PNGs so the report can be mailed or archived on its own;
``coworkenv report RUN`` re-renders it from the files the evaluations and trainings left.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from coworkenv.eval import plots
from coworkenv.eval.metrics import MULTI_TURN
from coworkenv.runs import EvalRecord, RunData, TrainRecord, load_run
from coworkenv.storage import atomic_write_text

REPORT_FILE = "report.html"
COLUMNS = ("tasks", "samples", "k", "score", "pass@1", "pass@k", "pass^k")

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}img{max-width:100%;margin:.4em 0}
.note{color:#666;font-size:.85em}
"""


def _img(png: bytes, alt: str) -> str:
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


def _cell(value: object) -> str:
    return f"{value:.1f}" if isinstance(value, float) else html.escape(str(value))


def _table(header: list[str], rows: list[list[object]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _headline(evals: list[EvalRecord]) -> str:
    rows = []
    for e in evals:
        for subset, key in (("all", "overall"), ("multi-turn", MULTI_TURN)):
            m = e.metrics[key]
            rows.append([e.label, subset, *(m[c] for c in COLUMNS)])
    return _table(["model", "subset", *COLUMNS], rows)


def _behaviour(evals: list[EvalRecord]) -> str:
    keys = ("turns_per_episode", "calls_per_episode", "valid_calls")
    rows = [[e.label, *(e.metrics.get("behaviour", {}).get(k, "–") for k in keys)] for e in evals]
    return _table(["model", "turns / episode", "tool calls / episode", "valid calls %"], rows)


def _breakdown(evals: list[EvalRecord], key: str, metric: str) -> str:
    """One row per group, one column per evaluated model."""
    groups = sorted({g for e in evals for g in e.metrics.get(key, {})})
    rows = [[g, *(e.metrics[key].get(g, {}).get(metric, "–") for e in evals)] for g in groups]
    return _table([key.removeprefix("by_"), *(e.label for e in evals)], rows)


def _training_table(trainings: list[TrainRecord]) -> str:
    rows = []
    for t in trainings:
        key = "loss" if t.kind == "sft" else "reward"
        logged = [r for r in t.log if key in r]  # an SFT log also holds validation records
        first, last = (logged[0], logged[-1]) if logged else ({}, {})
        rows.append(
            [
                t.label,
                t.kind,
                t.setting or "–",
                len(t.log),
                first.get(key, "–"),
                last.get(key, "–"),
                t.summary.get("seconds", "–"),
            ]
        )
    return _table(["run", "kind", "setting", "logged steps", "first", "last", "seconds"], rows)


def _rl_table(trainings: list[TrainRecord], evals: list[EvalRecord]) -> str:
    """Each RL setting's training reward and the held-out result of its checkpoint."""
    by_folder = {e.folder: e for e in evals}
    rows = []
    for t in (t for t in trainings if t.kind == "grpo"):
        rewards = [r["reward"] for r in t.log if "reward" in r]
        e = by_folder.get(t.folder)
        held = (
            [e.metrics["overall"]["score"], e.metrics["overall"]["pass@1"], e.metrics[MULTI_TURN]["score"]]
            if e
            else ["–"] * 3
        )
        rows.append(
            [
                t.setting or t.label,
                rewards[0] if rewards else "–",
                rewards[-1] if rewards else "–",
                max(rewards) if rewards else "–",
                *held,
            ]
        )
    header = ["setting", "first reward", "last reward", "best reward", "held-out score", "pass@1", "multi-turn score"]
    return _table(header, rows)


def _meta(evals: list[EvalRecord]) -> str:
    keys = ("model", "split", "samples", "bank", "seconds")
    rows = [[e.label, *(e.meta.get(k, "–") for k in keys)] for e in evals]
    return _table(["label", *keys], rows)


def render_html(run: RunData, title: str | None = None) -> str:
    """The report page for a run's evaluations and trainings."""
    title = title or f"coworkenv report — {run.root.name}"
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
    ]
    evals, trainings = run.evals, run.trainings
    if not evals and not trainings:
        parts.append("<p>No evaluations or trainings found in this folder.</p>")
    if evals:
        parts += [
            "<h2>Results</h2>",
            "<p class='note'>score = average score ×100; pass rates in percent; "
            "pass@k and pass^k use the unbiased estimators over the k shown.</p>",
            _headline(evals),
            _img(plots.headline_bars(evals), "headline metrics"),
            "<h3>Behaviour</h3>",
            _behaviour(evals),
            "<h2>By capability</h2>",
            _img(plots.capability_bars(evals), "score by capability"),
            _breakdown(evals, "by_capability", "score"),
            "<h3>pass@1 by capability</h3>",
            _breakdown(evals, "by_capability", "pass@1"),
            "<h2>By blueprint</h2>",
            _breakdown(evals, "by_blueprint", "score"),
            "<h2>Evaluations</h2>",
            _meta(evals),
        ]
    if trainings:
        parts += [
            "<h2>Training</h2>",
            _training_table(trainings),
            _img(plots.training_curves(trainings), "training curves"),
        ]
    if any(t.kind == "grpo" for t in trainings):
        parts += [
            "<h2>RL settings compared</h2>",
            "<p class='note'>same bank, seed and start checkpoint; setting = reward-normaliser-credit "
            "(broadcast = trajectory level, discounted = per turn, checks = check-attributed); "
            "rewards are mean episode scores per step (0–1).</p>",
            _rl_table(trainings, evals),
            _img(plots.rl_settings(trainings, evals), "RL settings"),
        ]
    summary = run.root / "summary.json"
    if summary.exists():
        text = json.dumps(json.loads(summary.read_text(encoding="utf-8")), indent=2)
        parts.append(f"<h2>Summary</h2><pre>{html.escape(text)}</pre>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(root: Path, title: str | None = None) -> Path:
    """Render ``report.html`` into the run folder and return its path."""
    root = Path(root)
    path = root / REPORT_FILE
    atomic_write_text(path, render_html(load_run(root), title))
    return path
