"""The client of ``coworkenv serve http``: a remote environment with a local environment's interface.

:class:`RemoteEnv` has ``reset`` / ``step`` / ``grade`` (and async twins), ``state``, ``end``,
``trajectory``, ``spec`` and ``messages``, so :func:`coworkenv.runtime.run_episode` and the
rollout runner drive it exactly like :class:`coworkenv.interop.env.Env`. It uses only the
standard library (one keep-alive connection per thread), so a client machine needs no
server extras.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
from typing import Any
from urllib.parse import urlencode, urlsplit

from coworkenv.runtime.observation import OBSERVATION, Observation
from coworkenv.runtime.turn import AssistantTurn, parse_turn
from coworkenv.spec.models import TaskSpec
from coworkenv.trajectory import Grade, Trajectory


class RemoteError(RuntimeError):
    """The server refused a request; ``status`` is its HTTP status."""

    def __init__(self, status: int, detail: object) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


class EnvClient:
    """Talks to one server. Safe to share between threads (each thread gets its own connection)."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 60.0) -> None:
        parts = urlsplit(url if "//" in url else f"http://{url}")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port
        self.base = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self._local = threading.local()
        self._specs: dict[str, TaskSpec] = {}

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
            conn = cls(self.host, self.port, timeout=self.timeout)
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle/delayed-ACK stalls
            self._local.conn = conn
        return conn

    def request(self, method: str, path: str, body: object = None) -> Any:
        """One JSON request; a dropped keep-alive connection is reopened once. The answer is the server's JSON,
        of the shape its route documents."""
        payload = None if body is None else json.dumps(body).encode()
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request(method, self.base + path, body=payload, headers=self.headers)
                resp = conn.getresponse()
                data = resp.read()
                break
            except (ConnectionError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        parsed = json.loads(data) if data else None
        if resp.status >= 400:
            raise RemoteError(resp.status, parsed.get("detail") if isinstance(parsed, dict) else parsed)
        return parsed

    def health(self) -> dict[str, object]:
        health: dict[str, object] = self.request("GET", "/health")
        return health

    def environments(self) -> list[dict[str, object]]:
        listed: list[dict[str, object]] = self.request("GET", "/environments")
        return listed

    def spec(self, env_id: str) -> TaskSpec:
        if env_id not in self._specs:
            self._specs[env_id] = TaskSpec.model_validate(self.request("GET", f"/environments/{env_id}"))
        return self._specs[env_id]

    def make(
        self,
        env_id: str | None = None,
        *,
        spec: TaskSpec | None = None,
        seed: int = 0,
        max_turns: int | None = None,
    ) -> RemoteEnv:
        """Open a session on ``env_id`` (or on an inline ``spec``)."""
        body: dict[str, object] = {"seed": seed, "max_turns": max_turns}
        if spec is not None:
            body["spec"] = spec.model_dump(mode="json")
        else:
            body["env_id"] = env_id
        out = self.request("POST", "/sessions", body)
        env = RemoteEnv(self, out["session_id"], out["env_id"], OBSERVATION.validate_python(out["observation"]))
        if spec is not None:
            env._spec = spec
        return env


_CLIENTS: dict[tuple[str, str | None], EnvClient] = {}


def client_for(url: str, token: str | None = None) -> EnvClient:
    """One shared client per server and token in this process (its connections are per thread)."""
    key = (url, token)
    if key not in _CLIENTS:
        _CLIENTS[key] = EnvClient(url, token)
    return _CLIENTS[key]


class RemoteEnv:
    """One session on the server."""

    def __init__(self, client: EnvClient, session_id: str, env_id: str, first: Observation) -> None:
        self.client = client
        self.session_id = session_id
        self.env_id = env_id
        self._first: Observation | None = first
        self._spec: TaskSpec | None = None
        self.messages: list[dict[str, object]] = list(first.messages)
        self.done = first.done
        self.steps = 0

    @property
    def spec(self) -> TaskSpec:
        if self._spec is None:
            self._spec = self.client.spec(self.env_id)
        return self._spec

    def _path(self, tail: str = "") -> str:
        return f"/sessions/{self.session_id}{tail}"

    def reset(self) -> Observation:
        obs = self._first or OBSERVATION.validate_python(self.client.request("POST", self._path("/reset")))
        self._first = None
        self.messages = list(obs.messages)
        self.done = obs.done
        self.steps = 0
        return obs

    def step(self, turn: object) -> Observation:
        self._first = None
        was_done = self.done
        wire = turn.model_dump(mode="json", exclude={"usage"}) if isinstance(turn, AssistantTurn) else turn
        obs = OBSERVATION.validate_python(self.client.request("POST", self._path("/step"), {"turn": wire}))
        if not was_done:
            self.steps = obs.step
            self.messages.append(parse_turn(turn, obs.step)[0].message())
            if obs.info.get("view_reset"):  # a notes stage began: the agent sees the system prompt and what is new
                self.messages = self.messages[:1]
            self.messages.extend(obs.messages)
        self.done = obs.done
        return obs

    def grade(self) -> Grade:
        return Grade.model_validate(self.client.request("POST", self._path("/grade")))

    def state(self) -> dict[str, object]:
        state: dict[str, object] = self.client.request("GET", self._path("/state"))
        return state

    def end(self, reason: str) -> None:
        self.client.request("POST", self._path("/end"), {"reason": reason})
        self.done = True

    def trajectory(self, policy: str = "", sample: int = 0) -> Trajectory:
        query = "/trajectory?" + urlencode({"policy": policy, "sample": sample})
        return Trajectory.model_validate(self.client.request("GET", self._path(query)))

    def close(self) -> None:
        self.client.request("DELETE", self._path())

    async def areset(self) -> Observation:
        return await asyncio.to_thread(self.reset)

    async def astep(self, turn: object) -> Observation:
        return await asyncio.to_thread(self.step, turn)

    async def agrade(self) -> Grade:
        return await asyncio.to_thread(self.grade)
