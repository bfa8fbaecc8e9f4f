"""Claw-Eval multi-turn tasks played end to end: one real OpenAI-protocol server on loopback is the policy under
evaluation, the persona user and the judge, told apart by the model each request names."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from claw_tasks import task_folder
from coworkenv.cli import app
from llm_server import Scripted, ScriptedServer

pytest.importorskip("openai", reason="the policy, the persona and the judge speak the OpenAI protocol")

QUESTIONS = ("What are the opening hours of the clinic?", "How many staff are there?")
HOURS, STAFF = "We open 8 to 18 on weekdays.", "Three vets and two nurses."
SPEC = "claw_eval_c90en_front_desk"
MIRROR = Path("/work/.mirror/claw-eval+claw-eval/repo")
UPSTREAM = "C19en_ab_testing_sample_size"


def _said(body: dict[str, Any], role: str) -> list[str]:
    return [str(m.get("content") or "") for m in body["messages"] if m["role"] == role]


def agent(body: dict[str, Any]) -> Scripted:
    """The policies under evaluation: ``asker`` reads the data, asks the MUST_ASK questions, then answers from
    what it heard; ``guesser`` answers at once; ``chatty`` never stops asking."""
    said = _said(body, "assistant")
    if body["model"] == "guesser":
        return Scripted("Here is a generic rota: Monday to Friday, 9 to 17, one person at the desk.")
    if body["model"] == "chatty":
        return Scripted(f"Anything else I should know? ({len(said)})")
    if not any(m["role"] == "tool" for m in body["messages"]):
        tool = body["tools"][0]["function"]["name"]
        call = {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": '{"query": "vet"}'}}
        return Scripted(content="", tool_calls=[call])
    for question in QUESTIONS:
        if question not in said:
            return Scripted(question)
    heard = _said(body, "user")[1:]
    return Scripted("Here is the weekday rota, from what you told me: " + " ".join(heard))


def persona(body: dict[str, Any]) -> Scripted:
    """The user: answers the question it is asked from the persona's details, [DONE] otherwise; ``mute`` and
    ``babbling`` say nothing usable; ``flaky`` leaves at once in the third trial (environment seed 2);
    ``upstream`` plays an upstream task's persona: one answer, then [DONE]."""
    if body["model"] == "upstream":
        answered = "[User]: About 3 percent." in body["messages"][-1]["content"]
        return Scripted("[DONE]" if answered else "About 3 percent.")
    assert "## Your persona" in body["messages"][0]["content"] and "clinic_hours" in body["messages"][0]["content"]
    if body["model"] == "mute":
        return Scripted("   ")
    if body["model"] == "babbling":
        return Scripted("?!?! ... ---")
    if body["model"] == "flaky" and body.get("seed") == 2:
        return Scripted("[DONE]")
    last = [x for x in body["messages"][-1]["content"].splitlines() if x.startswith("[Assistant]:")][-1]
    if "opening hours" in last:
        return Scripted(HOURS)
    if "staff" in last:
        return Scripted(f"[User]: {STAFF}")  # a copied transcript tag is dropped
    if "Anything else" in last:
        return Scripted("Not that I can think of.")
    return Scripted("Thanks, that is all I needed. [DONE]")


def judge(body: dict[str, Any]) -> Scripted:
    """The judge: half marks for every component of the upstream task; for the fixture task, clarification is
    full marks when both MUST_ASK questions were asked, content when the answer holds the persona's hours and
    staff."""
    prompt = body["messages"][-1]["content"]
    if "What is your baseline?" in prompt:
        return Scripted('{"score": 0.5}')
    spoken = " ".join(x for x in prompt.splitlines() if x.startswith("[ASSISTANT]:")).lower()
    if "Component: clarification_quality" in prompt:
        ok = all(q.lower() in spoken for q in QUESTIONS)
    else:
        ok = "8 to 18" in spoken and "three vets" in spoken
    return Scripted(json.dumps({"score": 1.0 if ok else 0.0, "reasoning": "scripted"}))


def roles(body: dict[str, Any]) -> Scripted:
    if body["model"] == "judge":
        return judge(body)
    if body["model"] == "upstream-agent":
        asked = any("baseline" in x for x in _said(body, "assistant"))
        return Scripted("Use a 3 percent baseline: about 8,000 users per arm." if asked else "What is your baseline?")
    if body["model"] in ("asker", "guesser", "chatty"):
        return agent(body)
    return persona(body)


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("claw")
    task_folder(root / "tasks")
    result = CliRunner().invoke(app, ["import", "claw-eval", str(root / "tasks"), "--out", str(root / "specs")])
    assert result.exit_code == 0, result.output
    assert "--split all --user openai:<model>@<url> (1 multi-turn" in " ".join(result.output.split())
    return root / "specs"


@pytest.fixture(scope="module")
def server() -> Any:
    with ScriptedServer({}, route=roles) as srv:
        yield srv


def run(bank: Path, out: Path, model: str, user: str | None, url: str, *extra: str) -> tuple[Any, dict[str, Any]]:
    args = ["eval", "--model", f"openai:{model}@{url}", "--bank", str(bank), "--split", "all", "--out", str(out)]
    args += ["--judge", f"openai:judge@{url}", *extra]
    if user is not None:
        args += ["--user", user]
    result = CliRunner().invoke(app, args)
    metrics = json.loads((out / "metrics.json").read_text())["metrics"] if (out / "metrics.json").exists() else {}
    return result, metrics


def trajectories(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]


def user_turns(traj: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in traj["messages"] if m["role"] == "user"][1:]


def requests(server: ScriptedServer, model: str) -> list[dict[str, Any]]:
    return [b for b in server.requests if b["model"] == model]


def judged(server: ScriptedServer, component: str = "") -> list[dict[str, Any]]:
    return [b for b in requests(server, "judge") if f"Component: {component}" in b["messages"][-1]["content"]]


def test_an_agent_that_asks_is_told_passes_three_trials_and_scores_the_same_run_after_run(
    bank: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    server.requests.clear()
    url = server.base_url
    result, metrics = run(bank, tmp_path / "a", "asker", f"openai:persona@{url}", url, "--trials", "3")
    assert result.exit_code == 0, result.output
    trajs = trajectories(tmp_path / "a")
    assert len(trajs) == 3
    for traj in trajs:
        assert user_turns(traj) == [HOURS, STAFF]  # the persona's words, the copied tag dropped
        assert traj["done_reason"] == "user_done" and traj["multi_turn"] and traj["grade"]["score"] == 1.0
        kinds = [s["user"]["kind"] for s in traj["steps"] if s.get("user")]
        assert kinds == ["persona", "persona", "end"]
    asked = requests(server, "asker")
    assert any(m["content"] == HOURS for m in asked[-1]["messages"] if m["role"] == "user")  # it reached the agent
    assert "Ask for what is missing." in asked[0]["messages"][0]["content"]  # Claw-Eval's system prompt suffix
    assert all(t["function"]["name"] != "web_fetch" for t in asked[0]["tools"])  # needs the live web: not offered
    assert len(requests(server, "persona")) == 9  # two answers and one [DONE] per trial
    prompts = {"clarification" in b["messages"][-1]["content"]: b["messages"][-1]["content"] for b in judged(server)}
    assert len(judged(server)) == 2  # three alike trials: one judgment per component
    assert QUESTIONS[1] in prompts[True] and "Here is the weekday rota" not in prompts[True]  # up to the last reply
    assert "Here is the weekday rota" in prompts[False]
    claw = metrics["claw_eval"]
    assert claw["label"] == "judged by judge" and claw["unscored_components"] == []
    assert (claw["tasks"], claw["trials"], claw["average"], claw["pass^3"]) == (1, 3, 100.0, 100.0)
    assert metrics["multi_turn"]["tasks"] == 1 and metrics["multi_turn"]["pass^k"] == 100.0
    assert "average 100.0, Pass^3 100.0 over 1 task(s) x 3 trial(s)" in " ".join(result.output.split())
    again, metrics_again = run(bank, tmp_path / "b", "asker", f"openai:persona@{url}", url, "--trials", "3")
    assert again.exit_code == 0, again.output
    assert metrics_again == metrics  # a fresh audit file: judged again, the same replies give the same scores
    grades = [t["grade"] for t in trajectories(tmp_path / "b")]
    assert grades == [t["grade"] for t in trajs]


def test_pass3_needs_all_three_trials_and_the_average_counts_each(
    bank: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    url = server.base_url
    result, metrics = run(bank, tmp_path / "f", "asker", f"openai:flaky@{url}", url, "--trials", "3")
    assert result.exit_code == 0, result.output
    scores = [t["grade"]["score"] for t in trajectories(tmp_path / "f")]
    assert scores == [1.0, 1.0, 0.2]  # the third persona left before saying anything: nothing judged good
    claw = metrics["claw_eval"]
    assert claw["pass^3"] == 0.0 and claw["average"] == round(100 * 2.2 / 3, 2)
    assert metrics["overall"]["pass@1"] == pytest.approx(200 / 3, abs=1e-3)


def test_the_user_turn_budget_is_kept(bank: Path, server: ScriptedServer, tmp_path: Path) -> None:
    server.requests.clear()
    url = server.base_url
    result, _ = run(bank, tmp_path / "c", "chatty", f"openai:persona@{url}", url)
    assert result.exit_code == 0, result.output
    (traj,) = trajectories(tmp_path / "c")
    assert user_turns(traj) == ["Not that I can think of."] * 5  # user_agent.max_rounds of the task
    assert traj["done_reason"] == "user_done" and len(requests(server, "persona")) == 5


def test_an_agent_that_never_asks_scores_lower_than_one_that_does(
    bank: Path, server: ScriptedServer, tmp_path: Path
) -> None:
    url = server.base_url
    scores, asked = {}, {}
    for model in ("asker", "guesser"):
        server.requests.clear()
        result, _ = run(bank, tmp_path / model, model, f"openai:persona@{url}", url)
        assert result.exit_code == 0, result.output
        (traj,) = trajectories(tmp_path / model)
        scores[model], asked[model] = traj["grade"]["score"], len(judged(server, "clarification_quality"))
    assert scores == {"asker": 1.0, "guesser": 0.2}  # both judged components 0: robustness alone
    assert asked == {"asker": 1, "guesser": 0}  # the persona never replied: no clarification to judge, as Claw-Eval


@pytest.mark.parametrize("model", ["mute", "babbling"])
def test_a_persona_that_says_nothing_usable_gets_the_fallback_reply(
    bank: Path, server: ScriptedServer, tmp_path: Path, model: str
) -> None:
    url = server.base_url
    result, _ = run(bank, tmp_path / model, "asker", f"openai:{model}@{url}", url)
    assert result.exit_code == 0, result.output
    (traj,) = trajectories(tmp_path / model)
    fallback = "I don't have more details on that. Please use what you have."
    assert user_turns(traj) == [fallback] * 5 and traj["done_reason"] == "user_done"
    assert {s["user"]["kind"] for s in traj["steps"] if s.get("user")} == {"fallback", "end"}
    assert traj["grade"]["score"] < 1.0  # the answer has nothing the persona did not say


def test_the_scripted_user_is_refused_before_any_episode(bank: Path, server: ScriptedServer, tmp_path: Path) -> None:
    server.requests.clear()
    url = server.base_url
    for user in (None, "scripted"):
        result, _ = run(bank, tmp_path / "s", "asker", user, url)
        text = " ".join(result.output.split())
        assert result.exit_code == 2 and f"{SPEC}: user.persona_turns" in text, result.output
        assert "--user openai:<model>@<url>" in text
    for user, extra, message in (
        ("anthropic:persona", (), "unknown user simulator 'anthropic:persona'"),
        (f"openai:persona@{url}", ("--env-server", "http://127.0.0.1:1"), "--env-server runs the server's scripted"),
    ):
        result, _ = run(bank, tmp_path / "s", "asker", user, url, *extra)
        assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output
    assert server.requests == [] and not (tmp_path / "s" / "trajectories.jsonl").exists()
    result = CliRunner().invoke(app, ["rollout", "--bank", str(bank), "--policy", "oracle", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--user openai:<model>@<url>" in " ".join(result.output.split())


def test_a_dead_user_endpoint_fails_the_run_naming_it(bank: Path, server: ScriptedServer, tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    result, _ = run(bank, tmp_path / "d", "asker", f"openai:persona@{dead}", server.base_url)
    text = " ".join(result.output.split())
    assert result.exit_code == 1 and f"--user openai:persona@{dead}" in text, result.output
    assert re.search(r"APIConnectionError|Connection", text)
    assert not (tmp_path / "d" / "metrics.json").exists()


def test_run_plays_one_episode_with_the_persona_and_refuses_the_scripted_user(
    bank: Path, server: ScriptedServer
) -> None:
    url, spec = server.base_url, str(bank / f"{SPEC}.yaml")
    result = CliRunner().invoke(app, ["run", spec, "--policy", f"openai:asker@{url}", "--json"])
    assert result.exit_code == 2 and "--user openai:<model>@<url>" in " ".join(result.output.split())
    args = ["run", spec, "--policy", f"openai:asker@{url}", "--user", f"openai:persona@{url}", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert user_turns(json.loads(result.output)) == [HOURS, STAFF]


@pytest.mark.skipif(not MIRROR.is_dir(), reason="the upstream Claw-Eval mirror is not on this machine")
def test_an_upstream_multi_turn_task_runs_end_to_end(server: ScriptedServer, tmp_path: Path) -> None:
    git = ["git", "-C", str(MIRROR)]
    names = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", f"tasks/{UPSTREAM}"], capture_output=True)
    for name in names.stdout.decode().splitlines():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(subprocess.run([*git, "show", f"HEAD:{name}"], capture_output=True).stdout)
    result = CliRunner().invoke(app, ["import", "claw-eval", str(tmp_path / "tasks"), "--out", str(tmp_path / "specs")])
    assert result.exit_code == 0, result.output
    server.requests.clear()
    url = server.base_url
    result, metrics = run(tmp_path / "specs", tmp_path / "ev", "upstream-agent", f"openai:upstream@{url}", url)
    assert result.exit_code == 0, result.output
    (traj,) = trajectories(tmp_path / "ev")
    assert user_turns(traj) == ["About 3 percent."] and traj["done_reason"] == "user_done"
    system = requests(server, "upstream-agent")[0]["messages"][0]["content"]
    assert "proactively ask for missing key information" in system  # the task's system_prompt_suffix
    assert "## Core Identity" in requests(server, "upstream")[0]["messages"][0]["content"]
    assert len(judged(server)) == 4  # clarification, trajectory, numerical accuracy, content: all judged at 0.5
    assert traj["grade"]["completion"] == 0.5 and traj["grade"]["score"] == 0.6
    assert metrics["claw_eval"]["average"] == 60.0 and metrics["claw_eval"]["pass^1"] == 0.0
