"""Request bodies of the HTTP server: read to a size limit, parsed off the event loop, made safe to echo.

The event loop is what answers every client (``/health`` included), so it only collects bytes:
decoding the JSON and validating the model run on a small pool of their own. A body over the
server's limit (:data:`coworkenv.interop.sessions.MAX_BODY` by default) is a 413 before it is
read whole. What JSON cannot carry back is refused or
replaced at this boundary, so nothing a client sends can make a later response fail: ``NaN`` and
``Infinity`` are refused, and lone surrogates (``"\\ud800"``, which a JSON escape can spell but
UTF-8 cannot encode) become U+FFFD everywhere in the body: turn text, tool names and arguments,
end reasons, inline specs. Validation errors name the field and the problem, never the input.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Executor
from typing import Any, TypeVar

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


def body_schema(model: type[BaseModel]) -> dict[str, object]:
    """The OpenAPI entry of a body that a route reads itself (``openapi_extra``)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


async def read_body(request: Request, model: type[M], pool: Executor, limit: int) -> M:
    """The body of ``request`` as ``model``: 413 past ``limit`` bytes, 400 for bad JSON, 422 for a wrong shape."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"request body of {declared} bytes is larger than {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"request body is larger than {limit} bytes")
        chunks.append(chunk)
    return await asyncio.get_running_loop().run_in_executor(pool, parse_body, b"".join(chunks), model)


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def parse_body(data: bytes, model: type[M]) -> M:
    """Decode, clean and validate one body (on a worker thread)."""
    try:
        value = json.loads(data or b"{}", parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:  # bad JSON or UTF-8, NaN, a huge integer, nesting past the stack
        raise HTTPException(400, f"request body: not valid JSON: {str(exc)[:200]}") from None
    try:
        return model.model_validate(without_lone_surrogates(value))
    except ValidationError as exc:
        raise HTTPException(422, validation_message(exc)) from None


def validation_message(exc: ValidationError) -> str:
    """``body.field: message; …`` for the first few errors (the input is never echoed: it may not be JSON)."""
    parts = [f"body.{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}" for e in exc.errors(include_input=False)]
    return "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more" if len(parts) > 5 else "")


def _clean(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # pairs written as two escapes join up; a lone half becomes U+FFFD
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def without_lone_surrogates(value: object) -> object:
    """``value`` (decoded JSON) with every string cleaned of lone surrogates; iterative, for any depth."""
    if isinstance(value, str):
        return _clean(value)
    if not isinstance(value, dict | list):
        return value
    stack: list[Any] = [value]  # dicts and lists, indexed by their own keys
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            item = node[key]
            if isinstance(item, str):
                node[key] = _clean(item)
            elif isinstance(item, dict | list):
                stack.append(item)
        if isinstance(node, dict) and any(isinstance(k, str) and _clean(k) != k for k in node):
            cleaned = {_clean(k): v for k, v in node.items()}
            node.clear()
            node.update(cleaned)
    return value
