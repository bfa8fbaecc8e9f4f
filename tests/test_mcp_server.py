"""The MCP server over stdio, driven by the mcp SDK's own client: an oracle episode played through MCP tools."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="needs the serve extra")

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from coworkenv.agents import OracleTeacher
from coworkenv.interop.mcp_server import CONVERSATION_URI, GRADE_URI, MESSAGE_USER, OVER, RESET
from coworkenv.runtime import Environment, run_episode
from coworkenv.spec import load_spec

ROOT = Path(__file__).parent.parent
SPEC = ROOT / "examples" / "external_quote_confirmation.yaml"


def oracle_actions() -> list[tuple[str, dict]]:
    """The oracle's episode as MCP calls: each tool call, and each text turn as message_user."""
    traj = run_episode(Environment(load_spec(SPEC)), OracleTeacher())
    actions = []
    for m in traj.messages:
        if m["role"] != "assistant":
            continue
        for c in m.get("tool_calls", []):
            actions.append((c["function"]["name"], json.loads(c["function"]["arguments"])))
        if not m.get("tool_calls"):
            actions.append((MESSAGE_USER, {"message": m["content"]}))
    return actions


async def play() -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from coworkenv.cli import main; main()", "serve", "mcp", str(SPEC)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(ROOT),
    )
    async with Client(params, read_timeout_seconds=60) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        before = json.loads((await client.read_resource(GRADE_URI)).contents[0].text)
        replies = []
        for name, args in oracle_actions():
            result = await client.call_tool(name, args)
            assert not result.is_error, result
            replies.append(result.content[0].text)
        after = json.loads((await client.read_resource(GRADE_URI)).contents[0].text)
        late = await client.call_tool("contacts_search", {"query": "x"})
        conversation = json.loads((await client.read_resource(CONVERSATION_URI)).contents[0].text)
        await client.call_tool(RESET, {})
        reset = json.loads((await client.read_resource(GRADE_URI)).contents[0].text)
        return {
            "tools": tools,
            "instructions": client.instructions,
            "before": before,
            "after": after,
            "replies": replies,
            "late": late,
            "conversation": conversation,
            "reset": reset,
        }


def test_oracle_episode_through_the_sdk_client_over_stdio() -> None:
    out = anyio.run(play)
    tools = out["tools"]
    assert {"mail_send", "contacts_search", MESSAGE_USER, RESET} <= set(tools)
    assert tools["mail_send"].input_schema["properties"]["to"]["type"] == "array"
    assert "Kenji" in out["instructions"] and "northwind.io" in out["instructions"]
    assert not out["before"]["done"] and out["before"]["score"] < 0.75
    assert out["after"]["done"] and out["after"]["score"] == 1.0 and out["after"]["passed"]
    assert "kenji.watanabe@acmeretail.com" in out["replies"][0] and out["replies"][-1].endswith(OVER)
    assert out["late"].is_error and out["late"].content[0].text == OVER
    assert [m["role"] for m in out["conversation"][:2]] == ["system", "user"]
    assert not out["reset"]["done"] and out["reset"]["score"] == out["before"]["score"]


def test_streamable_http_transport_on_loopback() -> None:
    from coworkenv.interop.http_server import running
    from coworkenv.interop.mcp_server import build_server

    app = build_server(load_spec(SPEC)).streamable_http_app(host="127.0.0.1")

    async def talk(url: str) -> tuple[set[str], str]:
        async with Client(f"{url}/mcp", read_timeout_seconds=30) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            reply = await client.call_tool(MESSAGE_USER, {"message": "Which quote do you mean?"})
            return names, reply.content[0].text

    with running(app) as url:
        names, reply = anyio.run(talk, url)
    assert "mail_send" in names and MESSAGE_USER in names and reply
