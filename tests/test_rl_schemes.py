"""Every reward, normalisation and credit scheme against values computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from coworkenv.data.rl import (
    RlSettings,
    ScoredEpisode,
    assign_group,
    check_shares,
    discounted_sums,
    episode_reward,
    export_rl,
    normalise,
)
from coworkenv.rollout import rollout_bank
from rollout_specs import Lazy, mail_reply_spec

# e1: both checks pass (turns 1 and 2): score 1.0, two turns.
E1 = ScoredEpisode(score=1.0, turns=2, checks=[(1.0, True, 1), (1.0, True, 2)])
# e2: one of two checks passes at turn 1: completion 0.5, score 0.8*0.5 + 0.2 = 0.6, three turns.
E2 = ScoredEpisode(score=0.6, turns=3, checks=[(1.0, True, 1), (1.0, False, None)])
# e3: checks pass but a rule is broken at turn 1: score 0, one turn.
E3 = ScoredEpisode(score=0.0, turns=1, checks=[(1.0, True, 1), (1.0, True, 1)], violation_steps=[1])
GROUP = [E1, E2, E3]


def values(settings: RlSettings) -> list[list[tuple[float, float, float]]]:
    return [[(v.reward, v.ret, v.advantage) for v in ep] for ep in assign_group(GROUP, settings)]


def close(a: list, b: list) -> bool:
    flat = lambda x: [y for v in x for y in (flat(v) if isinstance(v, list | tuple) else [v])]  # noqa: E731
    fa, fb = flat(a), flat(b)
    return len(fa) == len(fb) and all(math.isclose(p, q, abs_tol=1e-5) for p, q in zip(fa, fb, strict=True))


def test_episode_rewards() -> None:
    assert [episode_reward(o, "raw") for o in GROUP] == [1.0, 0.6, 0.0]
    assert [episode_reward(o, "binary") for o in GROUP] == [1.0, 0.0, 0.0]
    assert [episode_reward(o, "safety_gated") for o in GROUP] == [1.0, 0.6, -1.0]
    assert episode_reward(ScoredEpisode(score=0.75, turns=1), "binary") == 1.0


def test_group_normalisers() -> None:
    # binary [1, 0, 0]: mean 1/3, population std sqrt(2)/3
    # -> (2/3)/(sqrt(2)/3) = sqrt(2) and (-1/3)/(sqrt(2)/3) = -1/sqrt(2)
    assert close(normalise([1.0, 0.0, 0.0], "grpo"), [math.sqrt(2), -1 / math.sqrt(2), -1 / math.sqrt(2)])
    # leave-one-out baselines: (0+0)/2, (1+0)/2, (1+0)/2
    assert close(normalise([1.0, 0.0, 0.0], "rloo"), [1.0, -0.5, -0.5])
    # raw [1, .6, 0]: 1-(.6+0)/2, .6-(1+0)/2, 0-(1+.6)/2
    assert close(normalise([1.0, 0.6, 0.0], "rloo"), [0.7, 0.1, -0.8])
    assert normalise([1.0, 0.6, 0.0], "none") == [1.0, 0.6, 0.0]
    assert normalise([0.5, 0.5, 0.5], "grpo") == [0.0, 0.0, 0.0]
    assert normalise([0.9], "rloo") == [0.0] and normalise([0.9], "grpo") == [0.0]


def test_discounted_sums() -> None:
    assert close(discounted_sums([1.0, 0.0, 2.0], 0.5), [1.5, 1.0, 2.0])
    assert discounted_sums([], 0.9) == []


def test_broadcast_gives_every_turn_the_episode_advantage() -> None:
    got = values(RlSettings(reward="binary", normaliser="rloo", credit="broadcast", gamma=0.5))  # gamma ignored
    assert close(got, [[(0, 1, 1), (1, 1, 1)], [(0, 0, -0.5)] * 3, [(0, 0, -0.5)]])


def test_discounted_returns_and_advantages() -> None:
    # raw rewards 1, .6, 0 with RLOO advantages .7, .1, -.8; gamma .5 back from the last turn
    got = values(RlSettings(reward="raw", normaliser="rloo", credit="discounted", gamma=0.5))
    assert close(
        got,
        [
            [(0, 0.5, 0.35), (1.0, 1.0, 0.7)],
            [(0, 0.15, 0.025), (0, 0.3, 0.05), (0.6, 0.6, 0.1)],
            [(0, 0, -0.8)],
        ],
    )


def test_check_shares() -> None:
    # e1: 0.8*1/2 at turn 1; 0.8*1/2 + 0.2 robustness at turn 2 -> .4, .6 (sum 1 = score)
    assert close(check_shares(E1, 1.0), [0.4, 0.6])
    # e2: .4 at turn 1, nothing at 2, robustness .2 at 3; normalised by .6
    assert close(check_shares(E2, 0.6), [2 / 3, 0, 1 / 3])
    # a negative reward sits on the violating turns
    assert check_shares(ScoredEpisode(score=0, turns=3, violation_steps=[2]), -1.0) == [0, 1.0, 0]
    # a first_step of None/0/out of range is the last turn
    assert close(check_shares(ScoredEpisode(score=0.8, turns=2, robustness=0.0, checks=[(1, True, 0)]), 0.8), [0, 1])


def test_check_attributed_credit_without_normalisation() -> None:
    got = values(RlSettings(reward="raw", normaliser="none", credit="checks", violation_penalty=1.0))
    assert close(
        got,
        [
            [(0.4, 1.0, 1.0), (0.6, 0.6, 0.6)],
            [(0.4, 0.6, 0.6), (0, 0.2, 0.2), (0.2, 0.2, 0.2)],
            [(-1.0, -1.0, -1.0)],  # raw reward 0; the violating turn pays lambda = 1
        ],
    )


def test_check_attributed_with_safety_gate_and_rloo() -> None:
    got = values(RlSettings(reward="safety_gated", normaliser="none", credit="checks", violation_penalty=0.5))
    assert close(got[2], [(-1.5, -1.5, -1.5)])  # R = -1 on the violating turn, plus lambda .5
    got = values(RlSettings(reward="raw", normaliser="rloo", credit="checks"))
    # pooled turn rewards: e1 [.4,.6], e2 [.4,0,.2], e3 [-1]. Baselines: mean of the other episodes' turns:
    # e1: (.4+0+.2-1)/4 = -.1; e2: (.4+.6-1)/3 = 0; e3: (.4+.6+.4+0+.2)/5 = .32
    assert close([[a for _, _, a in ep] for ep in got], [[0.5 + 0.7, 0.7], [0.6, 0.2, 0.2], [-1.32]])


def test_check_attributed_grpo_pools_the_turns_of_the_group() -> None:
    got = assign_group([E1, E3], RlSettings(reward="raw", normaliser="grpo", credit="checks", gamma=0.5))
    # turn rewards [.4, .6] and [-1]: mean 0, population std sqrt((.16+.36+1)/3)
    std = math.sqrt((0.16 + 0.36 + 1.0) / 3)
    assert close([v.advantage for v in got[0]], [0.4 / std + 0.5 * 0.6 / std, 0.6 / std])
    assert close([v.ret for v in got[0]], [0.4 + 0.5 * 0.6, 0.6])
    assert close([v.advantage for v in got[1]], [-1.0 / std])


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError):
        RlSettings(credit="tokens")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RlSettings(gamma=1.5)


def test_export_rl_writes_per_turn_prompt_completion_records(tmp_path: Path) -> None:
    specs = [mail_reply_spec(0), mail_reply_spec(1, blueprint="held")]
    rollout_bank(specs, "oracle", 2, tmp_path / "oracle", progress=False)
    rollout_bank(specs, Lazy(), 1, tmp_path / "lazy", progress=False)
    summary = export_rl(
        [tmp_path / "oracle", tmp_path / "lazy"],
        tmp_path / "rl",
        RlSettings(normaliser="grpo", exclude_blueprints=["held"]),
    )
    records = [json.loads(line) for line in (tmp_path / "rl" / "rl.jsonl").read_text().splitlines()]
    assert summary.groups == 1 and summary.episodes == 3
    assert len(records) == summary.records == 4 + 4 + 1  # two oracle episodes of 4 turns, one lazy turn
    assert {r["spec_id"] for r in records} == {"mail_reply-0"}
    first = records[0]
    assert first["completion"][0]["role"] == "assistant" and first["prompt"][-1]["role"] == "user"
    assert first["tools"] and first["turn"] == 1 and first["turns"] == 4
    oracle = [r["advantage"] for r in records if r["passed"]]
    lazy = [r["advantage"] for r in records if not r["passed"]]
    # raw rewards [1, 1, lazy]: the oracle episodes share one positive advantage, the lazy one is negative
    assert len(set(oracle)) == 1 and oracle[0] > 0 > lazy[0]
    manifest = json.loads((tmp_path / "rl" / "manifest.json").read_text())
    assert manifest["group_sizes"] == {"3": 1} and manifest["excluded_blueprints"] == ["held"]
