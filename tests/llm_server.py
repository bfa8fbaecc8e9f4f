"""A real OpenAI-protocol HTTP server on 127.0.0.1 for the LLM-synthesis tests, scripted per request.

Requests are routed by the ``Request: job J, round R`` line every generator prompt ends
with, so replies do not depend on the order in which concurrent requests arrive. A script
maps (job, round) to a list of responses: each call takes the next one, the last repeats.
A server that plays several roles (a policy, a user, a judge) routes by a function of the
request instead (``route``), which sees the model named and the whole conversation.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUTE = re.compile(r"Request: job (\d+), round (\d+)\.")


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-request (the resume test) is expected


@dataclass
class Scripted:
    """One response: a completion with ``content`` (and ``tool_calls``), or an HTTP error ``status`` (with
    Retry-After)."""

    content: str = ""
    status: int = 200
    retry_after: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


@dataclass
class ScriptedServer:
    script: dict[tuple[int, int], list[Scripted]]
    default: Scripted = field(default_factory=lambda: Scripted("no script for this request"))
    requests: list[dict[str, Any]] = field(default_factory=list)
    delay: float = 0.0
    structured: bool = True
    """False: answer 400 to ``response_format``, as servers without structured output do."""
    """Seconds each response waits (so a test can kill a run mid-way)."""
    route: Callable[[dict[str, Any]], Scripted] | None = None
    """The response to a request body, instead of the (job, round) script."""

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: dict[tuple[int, int], int] = {}
        self.httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def respond(self, body: dict[str, Any]) -> Scripted:
        m = ROUTE.search(str(body["messages"][-1].get("content") or ""))
        key = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
        with self.lock:
            self.requests.append(body)
            if self.route is not None:
                return self.route(body)
            if "response_format" in body and not self.structured:
                return Scripted("response_format is not supported", status=400)
            replies = self.script.get(key, [self.default])
            k = self.calls.get(key, 0)
            self.calls[key] = k + 1
        return replies[min(k, len(replies) - 1)]

    def prompts(self, job: int) -> list[str]:
        """The last user message of every request for ``job``, in arrival order."""
        return [
            b["messages"][-1]["content"]
            for b in self.requests
            if f"Request: job {job}," in b["messages"][-1]["content"]
        ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = server.respond(body)
                time.sleep(server.delay)
                if reply.status != 200:
                    payload = {"error": {"message": reply.content or "scripted error", "type": "scripted"}}
                else:
                    words = sum(len(str(m.get("content") or "").split()) for m in body["messages"])
                    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                    if reply.tool_calls:
                        message["tool_calls"] = reply.tool_calls
                    payload = {
                        "id": "cmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": message,
                            }
                        ],
                        "usage": {
                            "prompt_tokens": words,
                            "completion_tokens": len(reply.content.split()),
                            "total_tokens": words + len(reply.content.split()),
                        },
                    }
                data = json.dumps(payload).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if reply.retry_after is not None:
                    self.send_header("Retry-After", reply.retry_after)
                self.end_headers()
                self.wfile.write(data)

        return Handler
