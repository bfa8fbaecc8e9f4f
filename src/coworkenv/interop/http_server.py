"""The HTTP environment server (FastAPI + uvicorn), in the style of OpenEnv / τ²-bench servers.

``POST /sessions`` opens an episode (an environment id from the catalog, or an inline spec)
and returns the first observation; ``POST /sessions/{id}/step`` applies one assistant turn
(the project's format or an OpenAI assistant message) and returns the observation with the
reward so far, ``done`` and ``info``. State, grade, trajectory, reset, end and delete complete
the interface the client needs to stand in for a local environment. Interactive OpenAPI docs
are at ``/docs`` (behind the token when one is set). It binds to loopback by default; anywhere
else a bearer token is required.

Whatever one client sends, the event loop keeps answering the others: bodies are size-limited
and parsed off the loop (:mod:`coworkenv.interop.http_body`), an inline spec is checked on a
thread within the step time limit (:mod:`coworkenv.interop.cancel`), and each session's steps run in
its own worker process (:mod:`coworkenv.interop.workers`), killed when a step overruns or when the
client that asked for it disconnects first (:class:`WorkerCalls`, the one way a route runs work in a worker).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import Annotated, TypeVar

from fastapi import Depends, FastAPI, Header, HTTPException, Request, params
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field, RootModel

from coworkenv.interop.cancel import Overrun, run_limited
from coworkenv.interop.catalog import Catalog
from coworkenv.interop.env import Observation
from coworkenv.interop.http_body import body_schema, read_body, without_lone_surrogates
from coworkenv.interop.sessions import Limits, Session, SessionError, SessionStore, describe
from coworkenv.interop.workers import Method, warm
from coworkenv.spec import SpecError, spec_from_data
from coworkenv.spec.models import TaskSpec
from coworkenv.storage import json_text
from coworkenv.trajectory import Grade, Trajectory

TOKEN_ENV = "COWORKENV_TOKEN"
T = TypeVar("T")


class CreateSession(BaseModel):
    env_id: str | None = Field(None, description="an id from GET /environments")
    spec: dict[str, object] | None = Field(None, description="an inline TaskSpec instead of env_id")
    seed: int = 0
    max_turns: int | None = Field(None, ge=1, description="cap below the spec's own turn limit")


class SessionOut(BaseModel):
    session_id: str
    env_id: str
    seed: int
    observation: Observation


class StepRequest(BaseModel):
    turn: dict[str, object] | str = Field(
        description="{'content', 'tool_calls': [{'id', 'name', 'arguments'}]} or an OpenAI assistant message, "
        "or plain text addressed to the user"
    )


class EndRequest(BaseModel):
    reason: str = "client_ended"


class ToolArguments(RootModel[dict[str, object] | None]):
    """The arguments of one tool call (absent or null: none)."""

    root: dict[str, object] | None = None


class SafeJSONResponse(JSONResponse):
    """JSON that escapes lone surrogates instead of failing (text from a catalog's files can hold them)."""

    def render(self, content: object) -> bytes:
        return json_text(content, sort_keys=False).encode("utf-8")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _auth(token: str | None) -> Callable[[str | None], None]:
    def check(authorization: str | None = Header(None)) -> None:
        if token is None:
            return
        scheme, _, given = (authorization or "").partition(" ")
        if scheme != "Bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    return check


def create_app(
    catalog: Catalog, limits: Limits | None = None, token: str | None = None, allow_inline: bool = True
) -> FastAPI:
    """The app; ``token`` (if set) is required as ``Authorization: Bearer …`` on every route but /health."""
    store = SessionStore(limits)
    parsing = ThreadPoolExecutor(max_workers=2, thread_name_prefix="coworkenv-parse")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(store.sweep())
        await asyncio.get_running_loop().run_in_executor(store.pool, warm)
        yield
        sweeper.cancel()
        store.shutdown()
        parsing.shutdown(wait=False, cancel_futures=True)

    open_docs = token is None
    app = FastAPI(
        title="coworkenv environment server",
        lifespan=lifespan,
        default_response_class=SafeJSONResponse,
        docs_url="/docs" if open_docs else None,
        redoc_url="/redoc" if open_docs else None,
        openapi_url="/openapi.json" if open_docs else None,
    )
    app.state.store = store
    auth = [Depends(_auth(token))]
    if not open_docs:
        _add_guarded_docs(app, auth)

    @app.exception_handler(SessionError)
    async def _session_error(request: Request, exc: SessionError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        """Where each error is and what it is, without echoing the input (a NaN or surrogate is no JSON)."""
        parts = [f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}" for e in exc.errors()]
        return JSONResponse({"detail": "; ".join(parts[:5])}, status_code=422)

    @app.get("/health")
    async def health() -> dict[str, object]:
        return {"status": "ok", "sessions": len(store), "environments": len(catalog)}

    @app.get("/environments", dependencies=auth)
    async def environments() -> list[dict[str, object]]:
        return catalog.summary()

    @app.get("/environments/{env_id}", dependencies=auth)
    async def environment(env_id: str) -> dict[str, object]:
        """The full spec (reference included): for trusted harnesses running their own policies."""
        try:
            return catalog.get(env_id).model_dump(mode="json")
        except KeyError as exc:
            raise HTTPException(404, str(exc.args[0])) from None

    _add_session_routes(app, catalog, store, auth, allow_inline, parsing)
    _add_tool_endpoints(app, catalog, store, auth, parsing)
    return app


def _add_guarded_docs(app: FastAPI, auth: list[params.Depends]) -> None:
    """The OpenAPI schema and its two viewers, behind the token like every other route."""

    @app.get("/openapi.json", dependencies=auth, include_in_schema=False)
    async def openapi() -> dict[str, object]:
        return app.openapi()

    @app.get("/docs", dependencies=auth, include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=app.title)

    @app.get("/redoc", dependencies=auth, include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(openapi_url="/openapi.json", title=app.title)


def _add_session_routes(
    app: FastAPI,
    catalog: Catalog,
    store: SessionStore,
    auth: list[params.Depends],
    allow_inline: bool,
    parsing: Executor,
) -> None:
    """One episode per session: open, step, inspect, grade, close."""

    @app.post("/sessions", dependencies=auth, openapi_extra=body_schema(CreateSession))
    async def create(request: Request, work: Work) -> SessionOut:
        body = await read_body(request, CreateSession, parsing, store.limits.max_body)
        try:
            spec = await run_limited(parsing, lambda: _new_spec(catalog, body, allow_inline), store.limits.step_timeout)
        except Overrun:
            raise HTTPException(422, f"request.spec: checking it took over {store.limits.step_timeout:g}s") from None
        session = await work.open(spec, body.seed, _cap(spec.max_turns, body.max_turns))
        obs = await work.run(session.id, Observation, "reset")
        return SessionOut(**describe(session), observation=obs)

    @app.post("/sessions/{sid}/step", dependencies=auth, openapi_extra=body_schema(StepRequest))
    async def step(sid: str, request: Request, work: Work) -> Observation:
        body = await read_body(request, StepRequest, parsing, store.limits.max_body)
        return await work.run(sid, Observation, "step", body.turn)

    @app.post("/sessions/{sid}/reset", dependencies=auth)
    async def reset(sid: str, work: Work) -> Observation:
        return await work.run(sid, Observation, "reset")

    @app.get("/sessions/{sid}/state", dependencies=auth)
    async def state(sid: str, work: Work) -> dict[str, object]:
        return {"session_id": sid, **(await work.run(sid, dict, "state"))}

    @app.post("/sessions/{sid}/grade", dependencies=auth)
    async def grade(sid: str, work: Work) -> Grade:
        return await work.run(sid, Grade, "grade")

    @app.post("/sessions/{sid}/end", dependencies=auth, openapi_extra=body_schema(EndRequest))
    async def end(sid: str, request: Request, work: Work) -> dict[str, object]:
        body = await read_body(request, EndRequest, parsing, store.limits.max_body)
        await work.run(sid, type(None), "end", body.reason)
        return {"session_id": sid, "done": True, "done_reason": body.reason}

    @app.get("/sessions/{sid}/trajectory", dependencies=auth)
    async def trajectory(work: Work, sid: str, policy: str = "", sample: int = 0) -> dict[str, object]:
        traj = await work.run(sid, Trajectory, "trajectory", policy, sample)
        return traj.model_dump(mode="json")

    @app.delete("/sessions/{sid}", dependencies=auth)
    async def delete(sid: str) -> dict[str, object]:
        store.close(sid)
        return {"session_id": sid, "closed": True}


def _add_tool_endpoints(
    app: FastAPI, catalog: Catalog, store: SessionStore, auth: list[params.Depends], parsing: Executor
) -> None:
    """Per-tool endpoints on one standing session per environment, in the way Claw-Eval's mock
    services work: ``tool_endpoints`` POST the arguments, ``reset_endpoint`` starts over."""
    standing: dict[str, str] = {}

    async def session_of(work: WorkerCalls, env_id: str, fresh: bool = False) -> str:
        sid = standing.get(env_id)
        if fresh or sid is None or sid not in store.sessions:
            try:
                spec = catalog.get(env_id)
            except KeyError as exc:
                raise HTTPException(404, str(exc.args[0])) from None
            if sid in store.sessions:
                store.close(sid)
            sid = standing[env_id] = (await work.open(spec)).id
        return sid

    @app.post("/environments/{env_id}/tools/{tool}", dependencies=auth, openapi_extra=body_schema(ToolArguments))
    async def call_tool(env_id: str, tool: str, request: Request, work: Work) -> dict[str, object]:
        args = (await read_body(request, ToolArguments, parsing, store.limits.max_body)).root
        name = without_lone_surrogates(tool)  # a path segment can spell a surrogate too (%ED%A0%80 decodes to one)
        call = {"id": f"http_{name}", "name": name, "arguments": args or {}}
        obs = await work.run(await session_of(work, env_id), Observation, "step", {"tool_calls": [call]})
        return {"content": obs.messages[0]["content"] if obs.messages else "", "done": obs.done}

    @app.post("/environments/{env_id}/reset", dependencies=auth)
    async def reset_env(env_id: str, work: Work) -> dict[str, object]:
        return {"env_id": env_id, "session_id": await session_of(work, env_id, fresh=True)}

    @app.post("/environments/{env_id}/grade", dependencies=auth)
    async def grade_env(env_id: str, work: Work) -> Grade:
        return await work.run(await session_of(work, env_id), Grade, "grade")


DISCONNECT_POLL = 0.1
"""Seconds between checks, while work runs in a worker, that its client is still connected."""


class WorkerCalls:
    """The session store as one request uses it: opening a session, or running a method on its environment,
    is stopped if the client disconnects before the worker answers, which ends the worker and frees the slot.

    Every route that runs work in a worker takes one (:data:`Work`), so none can run it unwatched."""

    def __init__(self, store: SessionStore, request: Request) -> None:
        self.store = store
        self.request = request

    async def open(self, spec: TaskSpec, seed: int = 0, max_turns: int | None = None) -> Session:
        return await _unless_disconnected(self.request, self.store.open(spec, seed, max_turns))

    async def run(self, sid: str, kind: type[T], method: Method, *args: object) -> T:
        return await _unless_disconnected(self.request, self.store.run(sid, kind, method, *args))


async def _worker_calls(request: Request) -> WorkerCalls:
    """The dependency that gives each request its :class:`WorkerCalls`, on its app's store (async: a plain function
    would cost each request a hop to a thread)."""
    return WorkerCalls(request.app.state.store, request)


Work = Annotated[WorkerCalls, Depends(_worker_calls)]
"""A route's parameter for running work in a worker."""


async def _unless_disconnected(request: Request, work: Coroutine[object, object, T]) -> T:
    """``work``, cancelled if the client disconnects first (a cancelled call ends its session and worker)."""
    task = asyncio.ensure_future(work)
    try:
        while not (await asyncio.wait({task}, timeout=DISCONNECT_POLL))[0]:
            if await request.is_disconnected():
                task.cancel()
                break
        return await task
    finally:
        task.cancel()


def _new_spec(catalog: Catalog, body: CreateSession, allow_inline: bool) -> TaskSpec:
    """The spec a session plays: the catalog's, or the inline one, checked."""
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
    return spec


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
def running(app: FastAPI, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
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
