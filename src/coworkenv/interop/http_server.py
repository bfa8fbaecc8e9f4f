"""The HTTP environment server (FastAPI + uvicorn), in the style of OpenEnv / τ²-bench servers.

``POST /sessions`` opens an episode (an environment id from the catalog, or an inline spec)
and returns the first observation; ``POST /sessions/{id}/step`` applies one assistant turn
(the project's format or an OpenAI assistant message) and returns the observation with the
reward so far, ``done`` and ``info``. State, grade, trajectory, reset, end and delete complete
the interface the client needs to stand in for a local environment. Interactive OpenAPI docs
are at ``/docs``. It binds to loopback by default; anywhere else a bearer token is required.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from fastapi import Depends, FastAPI, Header, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from coworkenv.interop.catalog import Catalog
from coworkenv.interop.env import Env, Observation
from coworkenv.interop.sessions import Limits, SessionError, SessionStore, describe
from coworkenv.spec import SpecError, spec_from_data
from coworkenv.trajectory import Grade

TOKEN_ENV = "COWORKENV_TOKEN"


class CreateSession(BaseModel):
    env_id: str | None = Field(None, description="an id from GET /environments")
    spec: dict[str, Any] | None = Field(None, description="an inline TaskSpec instead of env_id")
    seed: int = 0
    max_turns: int | None = Field(None, ge=1, description="cap below the spec's own turn limit")


class SessionOut(BaseModel):
    session_id: str
    env_id: str
    seed: int
    observation: Observation


class StepRequest(BaseModel):
    turn: dict[str, Any] | str = Field(
        description="{'content', 'tool_calls': [{'id', 'name', 'arguments'}]} or an OpenAI assistant message, "
        "or plain text addressed to the user"
    )


class EndRequest(BaseModel):
    reason: str = "client_ended"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _auth(token: str | None):
    def check(authorization: str | None = Header(None)) -> None:
        if token is None:
            return
        given = (authorization or "").removeprefix("Bearer ").strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    return check


def create_app(
    catalog: Catalog, limits: Limits | None = None, token: str | None = None, allow_inline: bool = True
) -> FastAPI:
    """The app; ``token`` (if set) is required as ``Authorization: Bearer …`` on every route but /health."""
    store = SessionStore(limits)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(store.sweep())
        yield
        sweeper.cancel()
        store.shutdown()

    app = FastAPI(title="coworkenv environment server", lifespan=lifespan)
    app.state.store = store
    auth = [Depends(_auth(token))]

    @app.exception_handler(SessionError)
    async def _session_error(request: Request, exc: SessionError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "sessions": len(store), "environments": len(catalog)}

    @app.get("/environments", dependencies=auth)
    async def environments() -> list[dict[str, Any]]:
        return catalog.summary()

    @app.get("/environments/{env_id}", dependencies=auth)
    async def environment(env_id: str) -> dict[str, Any]:
        """The full spec (reference included): for trusted harnesses running their own policies."""
        try:
            return catalog.get(env_id).model_dump(mode="json")
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from None

    _add_session_routes(app, catalog, store, auth, allow_inline)
    _add_tool_endpoints(app, catalog, store, auth)
    return app


def _add_session_routes(
    app: FastAPI, catalog: Catalog, store: SessionStore, auth: list[Any], allow_inline: bool
) -> None:
    """One episode per session: open, step, inspect, grade, close."""

    @app.post("/sessions", dependencies=auth)
    async def create(body: CreateSession) -> SessionOut:
        env = _new_env(catalog, body, allow_inline)
        session = store.open(env)
        obs = await store.run(session.id, lambda e: e.reset())
        return SessionOut(**describe(session), observation=obs)

    @app.post("/sessions/{sid}/step", dependencies=auth)
    async def step(sid: str, body: StepRequest) -> Observation:
        return await store.run(sid, lambda e: e.step(body.turn))

    @app.post("/sessions/{sid}/reset", dependencies=auth)
    async def reset(sid: str) -> Observation:
        return await store.run(sid, lambda e: e.reset())

    @app.get("/sessions/{sid}/state", dependencies=auth)
    async def state(sid: str) -> dict[str, Any]:
        return {"session_id": sid, **(await store.run(sid, lambda e: e.state()))}

    @app.post("/sessions/{sid}/grade", dependencies=auth)
    async def grade(sid: str) -> Grade:
        return await store.run(sid, lambda e: e.grade())

    @app.post("/sessions/{sid}/end", dependencies=auth)
    async def end(sid: str, body: EndRequest) -> dict[str, Any]:
        await store.run(sid, lambda e: e.end(body.reason))
        return {"session_id": sid, "done": True, "done_reason": body.reason}

    @app.get("/sessions/{sid}/trajectory", dependencies=auth)
    async def trajectory(sid: str, policy: str = "", sample: int = 0) -> dict[str, Any]:
        traj = await store.run(sid, lambda e: e.trajectory(policy=policy, sample=sample))
        return traj.model_dump(mode="json")

    @app.delete("/sessions/{sid}", dependencies=auth)
    async def delete(sid: str) -> dict[str, Any]:
        store.close(sid)
        return {"session_id": sid, "closed": True}


def _add_tool_endpoints(app: FastAPI, catalog: Catalog, store: SessionStore, auth: list[Any]) -> None:
    """Per-tool endpoints on one standing session per environment, in the way Claw-Eval's mock
    services work: ``tool_endpoints`` POST the arguments, ``reset_endpoint`` starts over."""
    standing: dict[str, str] = {}

    def session_of(env_id: str, fresh: bool = False) -> str:
        sid = standing.get(env_id)
        if fresh or sid is None or sid not in store.sessions:
            try:
                spec = catalog.get(env_id)
            except KeyError as exc:
                raise HTTPException(404, str(exc.args[0])) from None
            if sid in store.sessions:
                store.close(sid)
            sid = standing[env_id] = store.open(Env(spec)).id
        return sid

    @app.post("/environments/{env_id}/tools/{tool}", dependencies=auth)
    async def call_tool(env_id: str, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        call = {"id": f"http_{tool}", "name": tool, "arguments": args or {}}
        obs = await store.run(session_of(env_id), lambda e: e.step({"tool_calls": [call]}))
        return {"content": obs.messages[0]["content"] if obs.messages else "", "done": obs.done}

    @app.post("/environments/{env_id}/reset", dependencies=auth)
    async def reset_env(env_id: str) -> dict[str, Any]:
        return {"env_id": env_id, "session_id": session_of(env_id, fresh=True)}

    @app.post("/environments/{env_id}/grade", dependencies=auth)
    async def grade_env(env_id: str) -> Grade:
        return await store.run(session_of(env_id), lambda e: e.grade())


def _new_env(catalog: Catalog, body: CreateSession, allow_inline: bool) -> Env:
    if (body.env_id is None) == (body.spec is None):
        raise HTTPException(422, "give exactly one of env_id or spec")
    if body.spec is not None:
        if not allow_inline:
            raise HTTPException(403, "this server does not accept inline specs; use an env_id")
        try:
            spec = spec_from_data(body.spec, "request.spec")
        except SpecError as exc:
            raise HTTPException(422, str(exc)) from None
    else:
        try:
            spec = catalog.get(body.env_id or "")
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from None
    return Env(spec, seed=body.seed, max_turns=_cap(spec.max_turns, body.max_turns))


def _cap(limit: int, requested: int | None) -> int:
    return min(limit, requested or limit)


def check_binding(host: str, token: str | None) -> None:
    """Refuse to serve beyond loopback without a token."""
    if not is_loopback(host) and not token:
        raise ValueError(f"binding to {host} exposes the server beyond this machine: set --token or ${TOKEN_ENV}")


def serve(app: FastAPI, host: str = "127.0.0.1", port: int = 8000, token: str | None = None) -> None:
    # lazy: an optional extra (serve); the core and the CLI must run without it
    import uvicorn

    check_binding(host, token)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@contextmanager
def running(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run an ASGI app on a real uvicorn server in a background thread; yields its base URL.

    ``port=0`` picks a free port. For tests, benchmarks and notebooks; the server stops on exit.
    """
    import socket
    import threading

    # lazy: an optional extra (serve); the core and the CLI must run without it
    import uvicorn

    # proto=TCP lets asyncio set TCP_NODELAY on accepted sockets (with proto 0 it skips it, and every
    # response, written as headers then body, stalls ~40 ms on Nagle + delayed ACK)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the HTTP server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
