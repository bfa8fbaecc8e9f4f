r"""RL data: reward processing and credit assignment over K samples per environment.

Notation: environment group g holds K episodes i = 1..K of the same spec; episode i has
assistant turns t = 1..T_i; s_i its score, V_i its number of policy violations and v_{i,t}
those made at turn t; τ = 0.75 the pass threshold; ε = 1e-6.

**Reward** (one number per episode), ``reward=``
- ``raw``:           R_i = s_i
- ``binary``:        R_i = 1[s_i ≥ τ]
- ``safety_gated``:  R_i = s_i if V_i = 0 else −1   (a violation is worse than doing nothing;
  with ``raw`` both score 0)

**Group normalisation** N(x | X) of a value against its group's values X, ``normaliser=``
- ``none``:  N = x
- ``grpo``:  N = (x − mean X) / (std X + ε)   (population std; 0 when all values are equal)
- ``rloo``:  N = x − mean(X without episode i's own values)   (0 when K = 1)

**Credit assignment** to turns, ``credit=`` (γ = ``gamma``, λ = ``violation_penalty``)
- ``broadcast`` (trajectory level):  r_{i,t} = R_i·1[t = T_i],  G_{i,t} = R_i,
  A_{i,t} = Â_i with Â_i = N(R_i | {R_j}).  Every turn carries the episode's advantage (GRPO/RLOO).
- ``discounted`` (per-turn discounted returns):  r_{i,t} = R_i·1[t = T_i],
  G_{i,t} = γ^{T_i − t}·R_i,  A_{i,t} = γ^{T_i − t}·Â_i.  Early turns get less of the outcome.
- ``checks`` (check-attributed):  each passed check c (weight w_c, total weight W) credits
  u_{i,t} += 0.8·w_c / W to the turn that first made it true, and the robustness term
  0.2·ρ_i goes to the last turn, so Σ_t u_{i,t} = s_i for a safe episode. Shares
  σ_{i,t} = u_{i,t} / Σ_k u_{i,k} (all on T_i when nothing was credited); when R_i < 0 the
  shares are the violating turns', σ_{i,t} = v_{i,t} / V_i. Then
  r_{i,t} = R_i·σ_{i,t} − λ·v_{i,t}  (the step that broke a rule is penalised),
  G_{i,t} = Σ_{k ≥ t} γ^{k − t}·r_{i,k},
  A_{i,t} = Σ_{k ≥ t} γ^{k − t}·r̃_{i,k} with r̃_{i,k} = N(r_{i,k} | all turn rewards of the group)
  (process-supervision GRPO; for ``rloo`` the baseline is the mean turn reward of the other episodes).

Output records are one per assistant turn, in TRL's prompt–completion conversational form
(``prompt`` = the conversation before the turn, ``completion`` = the turn) with ``tools``,
``reward`` (r), ``return`` (G) and ``advantage`` (A). Only finished episodes (status ``ok``)
are used, and held-out blueprints are excluded.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, TypedDict, cast, get_args

from coworkenv.bank.sources import heldout_blueprints
from coworkenv.data.tool_arguments import ArgumentsFormat, checked_format, with_arguments
from coworkenv.grading.score import COMPLETION_WEIGHT, PASS_THRESHOLD, ROBUSTNESS_WEIGHT
from coworkenv.rollout.store import iter_episodes
from coworkenv.storage import atomic_write_json, atomic_write_text, json_text
from coworkenv.trajectory import Grade, Trajectory, stage_of_step

RewardScheme = Literal["raw", "binary", "safety_gated"]
Normaliser = Literal["none", "grpo", "rloo"]
Credit = Literal["broadcast", "discounted", "checks"]
REWARDS: tuple[RewardScheme, ...] = get_args(RewardScheme)
NORMALISERS: tuple[Normaliser, ...] = get_args(Normaliser)
CREDITS: tuple[Credit, ...] = get_args(Credit)
EPS = 1e-6


def checked_schemes(reward: str, normaliser: str, credit: str) -> tuple[RewardScheme, Normaliser, Credit]:
    """The three scheme names as their Literal types; a name outside them is a clear ValueError.

    The one check of scheme names: the RL exporter's settings and the trainer's grid use it.
    """
    for value, allowed in ((reward, REWARDS), (normaliser, NORMALISERS), (credit, CREDITS)):
        if value not in allowed:
            raise ValueError(f"unknown scheme {value!r}; expected one of {allowed}")
    return cast(RewardScheme, reward), cast(Normaliser, normaliser), cast(Credit, credit)


@dataclass
class RlSettings:
    reward: RewardScheme = "raw"
    normaliser: Normaliser = "grpo"
    credit: Credit = "broadcast"
    gamma: float = 1.0
    violation_penalty: float = 1.0
    pass_threshold: float = PASS_THRESHOLD
    exclude_blueprints: list[str] = field(default_factory=list)
    arguments: ArgumentsFormat = "text"
    """Tool-call arguments as JSON ``text`` (OpenAI format) or as ``object`` s (see data/tool_arguments.py)."""

    def __post_init__(self) -> None:
        checked_schemes(self.reward, self.normaliser, self.credit)
        checked_format(self.arguments)
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError("gamma must be in [0, 1]")


@dataclass
class ScoredEpisode:
    """What the schemes need from one episode."""

    score: float
    turns: int
    robustness: float = 1.0
    checks: list[tuple[float, bool, int | None]] = field(default_factory=list)
    """(weight, passed, first_step) per check."""
    violation_steps: list[int] = field(default_factory=list)

    @classmethod
    def from_trajectory(cls, traj: Trajectory) -> ScoredEpisode:
        g = graded(traj)
        return cls(
            score=g.score,
            turns=len(traj.steps),
            robustness=g.robustness,
            checks=[(c.weight, c.passed, c.first_step) for c in g.checks],
            violation_steps=[v.step for v in g.violations],
        )


def graded(traj: Trajectory) -> Grade:
    """The grade of a finished episode; only finished (graded) episodes reach the RL schemes."""
    if traj.grade is None:
        raise ValueError(f"episode {traj.spec_id}#{traj.sample} has no grade; only finished episodes carry rewards")
    return traj.grade


# --- the schemes -------------------------------------------------------------------------------


def episode_reward(o: ScoredEpisode, scheme: RewardScheme, pass_threshold: float = PASS_THRESHOLD) -> float:
    if scheme == "raw":
        return o.score
    if scheme == "binary":
        return 1.0 if o.score >= pass_threshold else 0.0
    return o.score if not o.violation_steps else -1.0


def normalise(values: list[float], scheme: Normaliser) -> list[float]:
    """Group-normalised values (one per episode of the group)."""
    return [
        normalise_against(v, values, [v for j, v in enumerate(values) if j != i], scheme) for i, v in enumerate(values)
    ]


def normalise_against(x: float, group: list[float], others: list[float], scheme: Normaliser) -> float:
    """N(x | group); ``others`` are the group's values that do not belong to x's episode (for RLOO)."""
    if scheme == "none":
        return x
    if scheme == "grpo":
        return (x - statistics.fmean(group)) / (statistics.pstdev(group) + EPS)
    return x - statistics.fmean(others) if others else 0.0


def discounted_sums(values: list[float], gamma: float) -> list[float]:
    """out_t = Σ_{k ≥ t} γ^{k − t}·values_k."""
    out, acc = [0.0] * len(values), 0.0
    for t in range(len(values) - 1, -1, -1):
        acc = values[t] + gamma * acc
        out[t] = acc
    return out


def check_shares(o: ScoredEpisode, reward: float) -> list[float]:
    """σ_t: how an episode's reward is split over its turns under check attribution."""
    shares = [0.0] * o.turns
    if reward < 0 and o.violation_steps:
        for step in o.violation_steps:
            shares[_clamp(step, o.turns) - 1] += 1.0 / len(o.violation_steps)
        return shares
    total_weight = sum(w for w, _, _ in o.checks) or 1.0
    for weight, passed, first in o.checks:
        if passed:
            shares[_clamp(first, o.turns) - 1] += COMPLETION_WEIGHT * weight / total_weight
    shares[-1] += ROBUSTNESS_WEIGHT * o.robustness
    credited = sum(shares)
    if credited <= 0:
        return [0.0] * (o.turns - 1) + [1.0]
    return [s / credited for s in shares]


def _clamp(step: int | None, turns: int) -> int:
    return turns if step is None or step < 1 or step > turns else step


def turn_rewards(o: ScoredEpisode, reward: float, credit: Credit, penalty: float) -> list[float]:
    """r_t for each turn of one episode."""
    if credit != "checks":
        return [0.0] * (o.turns - 1) + [reward]
    rewards = [reward * s for s in check_shares(o, reward)]
    for step in o.violation_steps:
        rewards[_clamp(step, o.turns) - 1] -= penalty
    return rewards


@dataclass
class TurnValues:
    reward: float
    ret: float
    advantage: float


def assign_group(outcomes: list[ScoredEpisode], s: RlSettings) -> list[list[TurnValues]]:
    """Per-turn reward, return and advantage for the K episodes of one environment."""
    rewards = [episode_reward(o, s.reward, s.pass_threshold) for o in outcomes]
    per_turn = [turn_rewards(o, R, s.credit, s.violation_penalty) for o, R in zip(outcomes, rewards, strict=True)]
    gamma = 1.0 if s.credit == "broadcast" else s.gamma
    returns = [discounted_sums(r, gamma) for r in per_turn]
    if s.credit == "checks":
        pooled = [x for r in per_turn for x in r]
        normed = [
            [
                normalise_against(x, pooled, [y for j, rj in enumerate(per_turn) if j != i for y in rj], s.normaliser)
                for x in r
            ]
            for i, r in enumerate(per_turn)
        ]
        advantages = [discounted_sums(n, gamma) for n in normed]
    else:
        episode_adv = normalise(rewards, s.normaliser)
        advantages = [
            [a * gamma ** (o.turns - t) for t in range(1, o.turns + 1)]
            for o, a in zip(outcomes, episode_adv, strict=True)
        ]
    return [
        [TurnValues(round(r, 6), round(g, 6), round(a, 6)) for r, g, a in zip(rs, gs, adv, strict=True)]
        for rs, gs, adv in zip(per_turn, returns, advantages, strict=True)
    ]


# --- export --------------------------------------------------------------------------------------


@dataclass
class RlSummary:
    out: Path
    records: int
    episodes: int
    groups: int
    settings: RlSettings
    stats: dict[str, object]
    evaluation_only: int = 0
    """Episodes skipped because their spec is evaluation-only (an imported task)."""


TurnRecord = TypedDict(
    "TurnRecord",
    {
        "run": str,
        "spec_id": str,
        "sample": int,
        "turn": int,
        "turns": int,
        "stage": int,
        "prompt": list[dict[str, object]],
        "completion": list[dict[str, object]],
        "tools": list[dict[str, object]],
        "reward": float,
        "return": float,
        "advantage": float,
        "score": float,
        "passed": bool,
    },
)
"""One line of ``rl.jsonl``: a prompt, the completion the policy gave, and its reward, return and advantage."""


def turn_records(
    traj: Trajectory, values: list[TurnValues], run: str = "", arguments: ArgumentsFormat = "text"
) -> list[TurnRecord]:
    """One prompt–completion record per assistant turn of a trajectory, with its stage (0 without stages); in a
    ``notes`` stage the prompt is what the agent saw, from the system prompt that started the stage's view.

    ``run`` (the rollout folder) with spec id, sample and turn is the record's unique key,
    so records of several runs can be merged.
    """
    messages = with_arguments(traj.messages, arguments)
    grade = graded(traj)
    positions = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    views = [stage_of_step(traj.stages, t) for t in range(1, len(positions) + 1)]
    return [
        {
            "run": run,
            "spec_id": traj.spec_id,
            "sample": traj.sample,
            "turn": t,
            "turns": len(values),
            "stage": stage,
            "prompt": messages[start:pos],
            "completion": [messages[pos]],
            "tools": traj.tools,
            "reward": v.reward,
            "return": v.ret,
            "advantage": v.advantage,
            "score": grade.score,
            "passed": grade.passed,
        }
        for t, (pos, v, (stage, start)) in enumerate(zip(positions, values, views, strict=True), start=1)
    ]


def export_rl(
    runs: str | Path | list[str | Path],
    out: str | Path,
    settings: RlSettings | None = None,
    *,
    bank: str | Path | None = None,
) -> RlSummary:
    """Per-turn RL records of the episodes in ``runs`` under the chosen schemes, into ``out/rl.jsonl``."""
    s = settings or RlSettings()
    excluded = set(s.exclude_blueprints) | heldout_blueprints(bank)
    run_list = [str(runs)] if isinstance(runs, str | Path) else [str(r) for r in runs]
    groups: dict[str, list[tuple[str, Trajectory]]] = defaultdict(list)
    evaluation_only = 0
    for run in run_list:
        for r in iter_episodes(run, status="ok"):
            traj = r.trajectory
            if traj is None:
                continue
            if traj.evaluation_only:
                evaluation_only += 1
            elif traj.steps and traj.blueprint not in excluded:
                groups[r.spec_id].append((run, traj))
    lines: list[str] = []
    advantages: list[float] = []
    for spec_id in sorted(groups):
        members = groups[spec_id]
        values = assign_group([ScoredEpisode.from_trajectory(t) for _, t in members], s)
        for (run, traj), vals in zip(members, values, strict=True):
            for rec in turn_records(traj, vals, run, s.arguments):
                lines.append(json_text(rec))
                advantages.append(rec["advantage"])
    out = Path(out)
    atomic_write_text(out / "rl.jsonl", "".join(line + "\n" for line in lines))
    stats: dict[str, object] = {
        "mean_advantage": round(statistics.fmean(advantages), 6) if advantages else None,
        "std_advantage": round(statistics.pstdev(advantages), 6) if advantages else None,
        "group_sizes": {str(k): v for k, v in sorted(Counter(len(t) for t in groups.values()).items())},
    }
    episodes = sum(len(t) for t in groups.values())
    summary = RlSummary(out, len(lines), episodes, len(groups), s, stats, evaluation_only)
    atomic_write_json(
        out / "manifest.json",
        {
            "records": len(lines),
            "episodes": episodes,
            "groups": len(groups),
            "runs": run_list,
            "excluded_blueprints": sorted(excluded),
            "skipped_evaluation_only": evaluation_only,
            "settings": asdict(s),
            **stats,
        },
    )
    return summary
