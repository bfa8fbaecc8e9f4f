"""The OpenAI-compatible policy and the LLM user against a local chat-completions server."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rollout_specs import mail_reply_spec

pytest.importorskip("openai")

import openai

from coworkenv.agents.llm_user import LLMUserEnvironment
from coworkenv.agents.openai_policy import OpenAIPolicy, wire_messages
from coworkenv.rollout.environments import make_environment
from coworkenv.rollout.policies import make_policy
from coworkenv.runtime import Environment, run_episode

USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def completion(message: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        "usage": USAGE,
    }


def tool_call(name: str, arguments: str, call_id: str = "call_a") -> dict[str, Any]:
    return {
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}],
    }


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


class FakeServer:
    """Speaks /v1/chat/completions; replies are scripted in order, the last one repeats."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                time.sleep(reply.delay)
                with server.lock:
                    server.in_flight -= 1
                data = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests = []
        self.max_in_flight = 0


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    srv = FakeServer()
    yield srv
    srv.httpd.shutdown()


def policy(server: FakeServer, **kw: Any) -> OpenAIPolicy:
    return OpenAIPolicy("fake", base_url=server.url, backoff_base=0.01, **kw)


MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "find the budget mail"}]


def test_native_tool_calls_and_usage(server: FakeServer) -> None:
    server.script(Reply(body=completion(tool_call("mail_search", '{"query": "budget"}'))))
    tools = Environment(mail_reply_spec(0)).router.schemas()
    turn = policy(server, temperature=0.2, seed=7).act(MESSAGES, tools)
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [("call_a", "mail_search", '{"query": "budget"}')]
    assert turn.usage == {**USAGE, "requests": 1, "retries": 0}
    (request,) = server.requests
    assert request["model"] == "fake" and request["tools"] == tools
    assert request["temperature"] == 0.2 and request["seed"] == 7


def test_wire_messages_keep_only_standard_fields() -> None:
    msgs = [
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "name": "mail_search", "content": "{}"},
    ]
    assert wire_messages(msgs) == [
        {"role": "assistant", "content": ""},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]


def test_malformed_arguments_become_an_error_observation(server: FakeServer) -> None:
    server.script(
        Reply(body=completion(tool_call("mail_search", '{"query": "bud'))),
        Reply(body=completion({"content": "I could not search."})),
    )
    traj = run_episode(Environment(mail_reply_spec(0)), make_policy(f"openai:fake@{server.url}"))
    assert traj.error is None and traj.calls[0].ok is False and traj.calls[0].error
    tool_msg = next(m for m in traj.messages if m["role"] == "tool")
    assert "error" in tool_msg["content"].lower()
    assert traj.usage["requests"] == len(traj.steps) and traj.usage["prompt_tokens"] == 11 * len(traj.steps)


def test_rate_limit_then_success_is_retried(server: FakeServer) -> None:
    server.script(
        Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"}),
        Reply(status=503, body={"error": {"message": "overloaded"}}),
        Reply(body=completion({"content": "Done."})),
    )
    turn = policy(server).act(MESSAGES, [])
    assert turn.content == "Done." and turn.usage["retries"] == 2 and len(server.requests) == 3


def test_client_errors_are_not_retried(server: FakeServer) -> None:
    server.script(Reply(status=400, body={"error": {"message": "bad request"}}))
    with pytest.raises(openai.BadRequestError):
        policy(server).act(MESSAGES, [])
    assert len(server.requests) == 1


def test_persistent_server_errors_give_up_after_max_retries(server: FakeServer) -> None:
    server.script(Reply(status=500, body={"error": {"message": "boom"}}))
    traj = run_episode(Environment(mail_reply_spec(0)), policy(server, max_retries=2))
    assert traj.error and "InternalServerError" in traj.error and traj.done_reason == "policy_error"
    assert len(server.requests) == 3


def test_reply_without_choices_is_retried(server: FakeServer) -> None:
    empty = {**completion({"content": "x"}), "choices": []}
    server.script(Reply(body=empty), Reply(body=completion({"content": "ok"})))
    turn = policy(server).act(MESSAGES, [])
    assert turn.content == "ok" and turn.usage["retries"] == 1


def test_timeouts_are_retried_then_raised(server: FakeServer) -> None:
    server.script(Reply(body=completion({"content": "late"}), delay=1.0), Reply(body=completion({"content": "ok"})))
    start = time.perf_counter()
    assert policy(server, timeout=0.3, max_retries=1).act(MESSAGES, []).content == "ok"
    server.script(Reply(body=completion({"content": "late"}), delay=1.0))
    with pytest.raises(openai.APITimeoutError):
        policy(server, timeout=0.3, max_retries=0).act(MESSAGES, [])
    assert time.perf_counter() - start < 3


def test_factory_parses_model_and_url(server: FakeServer) -> None:
    p = make_policy(f"openai:qwen3:8b@{server.url}")  # Ollama-style model names keep their colon
    assert p.name == "openai:qwen3:8b" and str(p.client.base_url).startswith(server.url)
    with pytest.raises(ValueError):
        make_policy("nonsense")


def test_llm_user_phrases_the_scripted_reply_and_keeps_the_facts(server: FakeServer) -> None:
    spec = mail_reply_spec(0)
    env = make_environment(spec, user=f"openai:persona@{server.url}")
    assert isinstance(env, LLMUserEnvironment)
    server.script(Reply(body=completion({"content": "Oh, that's 40k, thanks for asking!"})))
    reply = env.user.respond("What is the Q3 figure?")
    assert (reply.kind, reply.slots, reply.text) == ("fact", ["figure"], "Oh, that's 40k, thanks for asking!")
    assert "40k" in server.requests[0]["messages"][0]["content"]
    env.reset()
    server.script(Reply(body=completion({"content": "No idea, sorry."})))  # drops the value: scripted text wins
    assert env.user.respond("What is the figure?").text == "It is 40k."
    server.script(Reply(status=500, body={}))
    env.reset()
    assert env.user.respond("Which amount?").text == "It is 40k." and env.user.failures == 1


def test_oracle_grades_the_same_with_the_llm_user(server: FakeServer) -> None:
    server.script(Reply(body=completion({"content": "Sure: 40k. Also, yes, go ahead."})))
    spec = mail_reply_spec(0)
    traj = run_episode(make_environment(spec, user=f"openai:persona@{server.url}"), make_policy("oracle"))
    assert traj.grade is not None and traj.grade.passed and traj.grade.score == 1.0
    assert any(m["content"] == "Sure: 40k. Also, yes, go ahead." for m in traj.messages if m["role"] == "user")


def test_worker_processes_time_out_a_stalled_server(server: FakeServer, tmp_path: Any) -> None:
    from coworkenv.rollout import RolloutStore, RunOptions, rollout_bank

    server.script(Reply(body=completion({"content": "late"}), delay=3.0))
    summary = rollout_bank(
        [mail_reply_spec(0), mail_reply_spec(1)],
        f"openai:fake@{server.url}",
        1,
        tmp_path,
        workers=2,
        options=RunOptions(timeout=0.5),
        progress=False,
    )
    assert summary.counts["by_status"] == {"timeout": 2}
    records = list(RolloutStore(tmp_path).records())
    assert all(r.error is not None and r.error.startswith("EpisodeTimeout") for r in records)
    assert all(r.seconds is not None and r.seconds < 2.0 for r in records), (
        "the budget, not the server, ended the episodes"
    )


# --- command-line flags reach the endpoint; endpoint failures are loud ---------------------------


def _bank(tmp_path: Any, n: int = 2) -> str:
    from rollout_specs import write_specs

    return str(write_specs(tmp_path / "specs", [mail_reply_spec(i) for i in range(n)]))


def test_eval_sends_every_sampling_flag_and_records_it(server: FakeServer, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    server.script(Reply(body=completion({"content": "Done."})))
    out = tmp_path / "eval"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--model",
            f"openai:fake@{server.url}",
            "--bank",
            _bank(tmp_path),
            "--split",
            "all",
            "--temperature",
            "0.9",
            "--max-new-tokens",
            "64",
            "-k",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(server.requests) >= 6  # 2 environments x 3 samples
    assert {(r["temperature"], r["max_tokens"]) for r in server.requests} == {(0.9, 64)}
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["temperature"] == 0.9 and saved["max_new_tokens"] == 64 and saved["metrics"]["errors"] == 0


def test_rollout_sends_its_sampling_flags(server: FakeServer, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    server.script(Reply(body=completion({"content": "Done."})))
    result = CliRunner().invoke(
        app,
        [
            "rollout",
            "--bank",
            _bank(tmp_path),
            "--policy",
            f"openai:fake@{server.url}",
            "--temperature",
            "0.7",
            "--max-new-tokens",
            "32",
            "-w",
            "1",
            "--out",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert server.requests and {(r["temperature"], r["max_tokens"]) for r in server.requests} == {(0.7, 32)}


def test_a_url_without_a_scheme_gets_http(server: FakeServer) -> None:
    server.script(Reply(body=completion({"content": "Done."})))
    bare = server.url.removeprefix("http://")
    traj = run_episode(Environment(mail_reply_spec(0)), make_policy(f"openai:fake@{bare}"))
    assert traj.error is None and len(server.requests) == 1


def test_an_erroring_endpoint_fails_eval_run_and_rollout(server: FakeServer, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    runner = CliRunner()
    server.script(Reply(status=404, body={"error": {"message": "model 'fake' not found"}}))
    model, bank, out = f"openai:fake@{server.url}", _bank(tmp_path), tmp_path / "eval"
    result = runner.invoke(app, ["eval", "--model", model, "--bank", bank, "--split", "all", "--out", str(out)])
    assert result.exit_code == 1
    assert "2 of 2 episodes ended in an error" in result.output and "NotFoundError" in result.output
    assert json.loads((out / "metrics.json").read_text())["metrics"]["errors"] == 2
    tolerant = runner.invoke(
        app, ["eval", "--model", model, "--bank", bank, "--split", "all", "--out", str(out), "--max-error-rate", "1"]
    )
    assert tolerant.exit_code == 0 and "2 of 2 episodes ended in an error" in tolerant.output
    result = runner.invoke(app, ["run", str(Path(bank) / "mail_reply-0.yaml"), "--policy", model])
    assert result.exit_code == 1 and "NotFoundError" in result.output
    result = runner.invoke(app, ["rollout", "--bank", bank, "--policy", model, "-w", "1", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1 and "2 of 2 episodes" in result.output and "run again to retry" in result.output


def test_eval_keeps_concurrent_requests_in_flight(server: FakeServer, tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from coworkenv.cli import app

    server.script(Reply(body=completion({"content": "Done."}), delay=0.3))
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--model",
            f"openai:fake@{server.url}",
            "--bank",
            _bank(tmp_path, 4),
            "--split",
            "all",
            "--concurrency",
            "4",
            "--out",
            str(tmp_path / "eval"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert server.max_in_flight >= 3 and len(server.requests) >= 4
