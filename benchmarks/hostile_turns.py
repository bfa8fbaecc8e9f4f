"""Hostile turns against every example environment: escaped exceptions, half-applied steps, unserialisable episodes.

Each turn is drawn (seeded) from what broke a stage once: lone surrogates, far-off days ("in 9999999
days"), 5,000-digit numbers, arguments nested 1,000 deep, NaN, junk calls, text-format tool calls
read by ``chat_format``, and ordinary text. After every step the trajectory must agree with the
steps taken (one step record and one assistant message each); every ended episode must serialise
through the public model. The script prints the counts, which must all be zero but the first.

    python benchmarks/hostile_turns.py [--turns 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from coworkenv.agents.chat_format import parse_assistant_text
from coworkenv.runtime import AssistantTurn, Environment, ToolCall
from coworkenv.spec import load_spec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


TEXTS = [
    "Done \ud800",
    "\udfff\ud800 approved",
    "Should I cancel the meetings in 9999999 days?",
    "Shall I move it 99999999 weeks ago, tomorrow or next Friday?",
    "The total is " + "9" * 5000,
    "ok",
    "",
    "Which date did you mean, the 6th or 31 February?",
]
ARGUMENTS: list[Any] = [
    '{"amount": ' + "9" * 5000 + "}",
    '{"a":' * 2000 + "1" + "}" * 2000,
    '{"amount": NaN}',
    '{"body": "Done \\ud800"}',
    "[1, 2]",
    '{"amount": ',
    _deep(1000),
    {"amount": 10**5000},
    {"amount": float("nan"), "to": ["\ud800"]},
    {},
]


def hostile_turn(rng: random.Random, tools: list[str]) -> Any:
    """One turn of one of the shapes a model or a policy can produce."""
    shape = rng.randrange(4)
    tool = rng.choice([*tools, "no_such_tool", "mail_\ud800"])
    arguments = rng.choice(ARGUMENTS)
    if shape == 0:
        return rng.choice(TEXTS)
    if shape == 1:
        call = {"id": "c1", "type": "function", "function": {"name": tool, "arguments": arguments}}
        return {"role": "assistant", "content": rng.choice(TEXTS), "tool_calls": [call]}
    if shape == 2:
        args = arguments if isinstance(arguments, dict) else "{}"
        return AssistantTurn(content=rng.choice(TEXTS), tool_calls=[ToolCall(id="c1", name=tool, arguments=args)])
    text = arguments if isinstance(arguments, str) else "{}"
    return parse_assistant_text(f'{rng.choice(TEXTS)}<tool_call>{{"name": "{tool}", "arguments": {text}}}</tool_call>')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    rng = random.Random(opts.seed)
    envs = [Environment(load_spec(p)) for p in sorted(EXAMPLES.glob("*.yaml"))]
    escaped = half_applied = unserialisable = turns = episodes = 0
    start = time.perf_counter()
    while turns < opts.turns:
        env = rng.choice(envs)
        env.reset()
        episodes += 1
        for taken in range(1, rng.randint(1, 6) + 1):
            turns += 1
            try:
                obs = env.step(hostile_turn(rng, sorted(env.router.tools)))
            except Exception as exc:  # counted and named: the figure that must be zero
                escaped += 1
                print(f"escaped: {type(exc).__name__}: {str(exc)[:120]}")
                break
            trajectory = env.trajectory()
            assistant = sum(1 for m in trajectory.messages if m["role"] == "assistant")
            half_applied += not (len(trajectory.steps) == assistant == taken)
            if obs.done:
                break
        try:
            json.loads(env.trajectory().model_dump_json())
        except Exception:  # counted: must be zero
            unserialisable += 1
    seconds = time.perf_counter() - start
    print(
        f"{turns} hostile turns in {episodes} episodes over {len(envs)} environments, {seconds:.1f} s: "
        f"{escaped} escaped exceptions, {half_applied} half-applied steps, {unserialisable} unserialisable episodes"
    )


if __name__ == "__main__":
    main()
