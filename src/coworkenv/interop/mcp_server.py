"""An MCP server over one environment, so any MCP client can be evaluated on it.

The environment's tools become MCP tools with their JSON schemas; ``message_user`` talks to
the simulated user (questions, confirmations, the final report); ``reset_episode`` starts
over. The server's instructions carry the system prompt and the user's opening request. The
grade and the conversation are resources (``coworkenv://grade``, ``coworkenv://conversation``)
for the harness, not tools, so the agent under evaluation is not handed its score. One
server holds one episode; each tool call is one step of it.
"""

from __future__ import annotations

import json

import mcp_types as types
from mcp.server.lowlevel import Server

from coworkenv.interop.env import Env, Observation
from coworkenv.spec.models import TaskSpec

MESSAGE_USER = "message_user"
RESET = "reset_episode"
GRADE_URI = "coworkenv://grade"
CONVERSATION_URI = "coworkenv://conversation"
OVER = "[environment] The episode is over; read coworkenv://grade for the result."

_EXTRA_TOOLS = [
    types.Tool(
        name=MESSAGE_USER,
        description="Send a message to the user you work for: ask a question, ask for confirmation, or report "
        "the result when the request is done. Returns the user's reply.",
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string", "description": "what you say to the user"}},
            "required": ["message"],
        },
    ),
    types.Tool(
        name=RESET,
        description="Start the episode over from the initial workspace.",
        input_schema={"type": "object", "properties": {}},
    ),
]


class EpisodeHost:
    """The episode behind the MCP handlers (plain methods, so they are testable without a transport)."""

    def __init__(self, spec: TaskSpec, seed: int = 0) -> None:
        self.env = Env(spec, seed=seed)
        self.opening = self.env.reset()
        self.calls = 0

    def instructions(self) -> str:
        system, request = self.opening.messages[0]["content"], self.opening.messages[-1]["content"]
        return f"{system}\n\nThe user's request:\n{request}\n\nUse {MESSAGE_USER} to talk to the user."

    def tools(self) -> list[types.Tool]:
        env_tools = [
            types.Tool(name=f["name"], description=f.get("description"), input_schema=f["parameters"])
            for f in (t["function"] for t in self.opening.tools)
        ]
        return env_tools + _EXTRA_TOOLS

    def call(self, name: str, arguments: dict[str, object] | None) -> tuple[str, bool]:
        """The text the client sees and whether it is an error."""
        if name == RESET:
            self.opening = self.env.reset()
            return "The episode was reset.", False
        if self.env.done:
            return OVER, True
        if name == MESSAGE_USER:
            text = str((arguments or {}).get("message", ""))
            obs = self.env.step(text)
            return _render(obs, "(no reply)"), False
        self.calls += 1
        call = {"id": f"mcp_{self.calls}", "name": name, "arguments": arguments or {}}
        obs = self.env.step({"tool_calls": [call]})
        return _render(obs, ""), False

    def grade(self) -> str:
        return json.dumps({"done": self.env.done, **self.env.grade().model_dump(mode="json")}, indent=2)

    def conversation(self) -> str:
        return json.dumps(self.env.messages, indent=2, ensure_ascii=False)


def _render(obs: Observation, empty: str) -> str:
    parts = [str(m.get("content") or "") for m in obs.messages]
    if obs.done:
        parts.append(OVER)
    return "\n".join(p for p in parts if p) or empty


def build_server(spec: TaskSpec, seed: int = 0) -> Server[object]:
    host = EpisodeHost(spec, seed)

    async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=host.tools())

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, error = host.call(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)

    async def list_resources(ctx: object, params: object) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=GRADE_URI, name="grade", mime_type="application/json"),
                types.Resource(uri=CONVERSATION_URI, name="conversation", mime_type="application/json"),
            ]
        )

    async def read_resource(ctx: object, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        readers = {GRADE_URI: host.grade, CONVERSATION_URI: host.conversation}
        if str(params.uri) not in readers:
            raise ValueError(f"unknown resource {params.uri}")
        text = readers[str(params.uri)]()
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=str(params.uri), text=text, mime_type="application/json")]
        )

    return Server(
        f"coworkenv-{spec.id}",
        instructions=host.instructions(),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def run(spec: TaskSpec, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, seed: int = 0) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (http, at ``/mcp``)."""
    server = build_server(spec, seed)
    if transport == "stdio":
        # lazy: an optional extra (serve); the core and the CLI must run without it
        import anyio
        from mcp.server.stdio import stdio_server

        async def main() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(main)
    elif transport == "http":
        # lazy: an optional extra (serve); the core and the CLI must run without it
        import uvicorn

        uvicorn.run(server.streamable_http_app(host=host), host=host, port=port, log_level="warning")
    else:
        raise ValueError(f"unknown transport {transport!r}; expected stdio or http")
