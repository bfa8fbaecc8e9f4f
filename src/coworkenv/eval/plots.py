"""Report figures (matplotlib, headless), each returned as PNG bytes.

Each function takes plain data from :mod:`coworkenv.runs`, so figures can be
re-rendered from files without any model.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from coworkenv.eval.metrics import MULTI_TURN
from coworkenv.runs import EvalRecord, TrainRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

HEADLINE = ("score", "pass@1", "pass@k", "pass^k")


def _pyplot() -> Any:
    # lazy: an optional extra (report); the core and the CLI must run without it
    import matplotlib

    matplotlib.use("Agg")
    # lazy: an optional extra (report); the core and the CLI must run without it
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110)
    _pyplot().close(fig)
    return buf.getvalue()


def _grouped_bars(ax: Axes, groups: list[str], series: dict[str, list[float]]) -> None:
    """Bars of each series side by side within each group, with value labels."""
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        bars = ax.bar(xs, values, width, label=name)
        ax.bar_label(bars, fmt="%.0f", fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right")
    ax.set_ylim(0, 105)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _steps_axis(ax: Axes, title: str) -> None:
    # lazy: an optional extra (report); the core and the CLI must run without it
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("step")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def headline_bars(evals: list[EvalRecord]) -> bytes:
    """Base vs trained side by side: the headline metrics and the multi-turn subset."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 3.8))
    groups = [*HEADLINE, "multi-turn score", "multi-turn pass@1"]
    series = {
        e.label: [e.metrics["overall"][m] for m in HEADLINE]
        + [e.metrics[MULTI_TURN]["score"], e.metrics[MULTI_TURN]["pass@1"]]
        for e in evals
    }
    _grouped_bars(ax, groups, series)
    ax.set_title("held-out results (percent)")
    return _png(fig)


def capability_bars(evals: list[EvalRecord]) -> bytes:
    """Average score ×100 by capability, one bar per evaluated model."""
    plt = _pyplot()
    caps = sorted({c for e in evals for c in e.metrics.get("by_capability", {})})
    fig, ax = plt.subplots(figsize=(max(7, 1.3 * len(caps) + 4), 3.8))
    series = {e.label: [e.metrics["by_capability"].get(c, {}).get("score", 0.0) for c in caps] for e in evals}
    _grouped_bars(ax, caps, series)
    ax.set_title("score by capability")
    return _png(fig)


def _smooth(values: list[float], window: int) -> list[float]:
    out, acc = [], 0.0
    for i, v in enumerate(values):
        acc += v
        if i >= window:
            acc -= values[i - window]
        out.append(acc / min(i + 1, window))
    return out


def training_curves(trainings: list[TrainRecord]) -> bytes:
    """SFT loss and RL reward against step, one line per training run."""
    plt = _pyplot()
    sft = [t for t in trainings if t.kind == "sft"]
    rl = [t for t in trainings if t.kind == "grpo"]
    panels = [p for p in ((sft, "loss", "SFT loss"), (rl, "reward", "RL mean reward")) if p[0]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 3.5), squeeze=False)
    for ax, (runs, key, title) in zip(axes[0], panels, strict=True):
        for t in runs:
            points = [(r["step"], r[key]) for r in t.log if key in r]
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, _smooth(list(ys), 3 if key == "reward" else 1), label=t.label, marker=".")
        _steps_axis(ax, title)
    return _png(fig)


def rl_settings(trainings: list[TrainRecord], evals: list[EvalRecord]) -> bytes:
    """RL settings side by side: reward curves on one axes, held-out score and pass@1 on the other."""
    plt = _pyplot()
    rl = [t for t in trainings if t.kind == "grpo"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.8))
    for t in rl:
        points = [(r["step"], r["reward"]) for r in t.log if "reward" in r]
        if points:
            xs, ys = zip(*points, strict=True)
            left.plot(xs, _smooth(list(ys), 3), label=t.setting or t.label, marker=".")
    _steps_axis(left, "training reward (moving average of 3)")
    by_folder = {e.folder: e for e in evals}
    scored = [(t.setting or t.label, by_folder[t.folder]) for t in rl if t.folder in by_folder]
    if scored:
        names = [n for n, _ in scored]
        _grouped_bars(
            right,
            names,
            {
                "score": [e.metrics["overall"]["score"] for _, e in scored],
                "pass@1": [e.metrics["overall"]["pass@1"] for _, e in scored],
                "multi-turn score": [e.metrics[MULTI_TURN]["score"] for _, e in scored],
            },
        )
    right.set_title("held-out after RL, per setting")
    return _png(fig)
