"""A policy on any OpenAI-compatible chat-completions server (vLLM, SGLang, Ollama, hosted).

Tool calls are native (``tools=`` in the request, ``tool_calls`` in the reply). Servers
under load answer 429 or 5xx, drop connections or stall, so each request has a timeout
and is retried with exponential backoff (honouring ``Retry-After``); a reply without
choices is treated as transient too. Token usage, request count and retries are recorded
on every turn, and the environment sums them over the episode.

With ``concurrency > 1`` the policy also has ``act_batch``: evaluation and rollouts then play
episodes in lockstep and send up to ``concurrency`` requests at once from a thread pool.
"""

from __future__ import annotations

import os
import random
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

from coworkenv.runtime.turn import AssistantTurn, ToolCall

_KEEP = {
    "system": ("role", "content"),
    "user": ("role", "content"),
    "assistant": ("role", "content", "tool_calls"),
    "tool": ("role", "tool_call_id", "content"),
}


class EmptyReply(Exception):
    """The server answered without any choice: retried, then reported."""


def wire_messages(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    """Only the fields every server accepts (strict ones reject e.g. ``name`` on tool turns)."""
    out = []
    for m in messages:
        keys = _KEEP.get(str(m.get("role", "")), tuple(m))
        msg = {k: m[k] for k in keys if k in m}
        if msg.get("role") == "assistant" and not msg.get("tool_calls"):
            msg.pop("tool_calls", None)
        out.append(msg)
    return out


def backoff_seconds(attempt: int, base: float, cap: float, retry_after: float | None, rng: random.Random) -> float:
    """Exponential backoff with full jitter; the server's ``Retry-After`` wins when given."""
    if retry_after is not None:
        return min(retry_after, cap)
    return rng.uniform(0, min(cap, base * 2**attempt))


def retry_after_seconds(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def turn_from_message(message: Any) -> AssistantTurn:
    """An SDK message (or dict) as an AssistantTurn; broken arguments stay raw for the env to report."""
    data = message if isinstance(message, dict) else message.model_dump()
    calls = []
    for i, call in enumerate(data.get("tool_calls") or []):
        fn = call.get("function") or {}
        if not fn.get("name"):
            continue
        args = fn.get("arguments")
        calls.append(ToolCall(id=call.get("id") or f"call_{i}", name=fn["name"], arguments=args or "{}"))
    content = data.get("content")
    return AssistantTurn(content=content if isinstance(content, str) else None, tool_calls=calls)


class OpenAIPolicy:
    """Chat completions with native tool calls, timeouts and retries."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = 1024,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        seed: int | None = None,
        extra_body: dict[str, object] | None = None,
        concurrency: int = 1,
    ) -> None:
        # lazy: an optional extra (openai); the core and the CLI must run without it
        from openai import OpenAI

        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency
        if concurrency > 1:  # only then: callers take act_batch as "play episodes in lockstep"
            self.act_batch = self._act_concurrently
        self.model = model
        self.name = f"openai:{model}"
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.seed = seed
        self.extra_body = extra_body
        self.rng = random.Random(seed)
        self.client = OpenAI(
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            timeout=timeout,
            max_retries=0,
        )

    def act(self, messages: list[dict[str, object]], tools: list[dict[str, object]]) -> AssistantTurn:
        request: dict[str, Any] = {"model": self.model, "messages": wire_messages(messages)}
        if tools:
            request["tools"] = tools
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        if self.seed is not None:
            request["seed"] = self.seed
        if self.extra_body:
            request["extra_body"] = self.extra_body
        response, retries = self._complete(request)
        turn = turn_from_message(response.choices[0].message)
        usage = response.usage.model_dump() if response.usage is not None else {}
        turn.usage = {k: int(v) for k, v in usage.items() if isinstance(v, int)}
        turn.usage.update(requests=1, retries=retries)
        return turn

    def _act_concurrently(
        self, batch: list[tuple[list[dict[str, object]], list[dict[str, object]]]]
    ) -> list[AssistantTurn]:
        """One turn for each conversation, up to ``concurrency`` requests in flight."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(self.concurrency, max(len(batch), 1))) as pool:
            return list(pool.map(lambda item: self.act(*item), batch))

    def _complete(self, request: dict[str, Any]) -> tuple[ChatCompletion, int]:
        """One completion, retrying transient failures; the last error propagates."""
        # lazy: an optional extra (openai); the core and the CLI must run without it
        import openai

        transient = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, EmptyReply)
        attempt = 0
        while True:
            try:
                response = self.client.chat.completions.create(**request)
                if not getattr(response, "choices", None):
                    raise EmptyReply(f"{self.model}: the server returned no choices")
                return response, attempt
            except openai.APIStatusError as exc:
                if (exc.status_code < 500 and exc.status_code != 429) or attempt >= self.max_retries:
                    raise
                delay = retry_after_seconds(exc)
            except transient:
                if attempt >= self.max_retries:
                    raise
                delay = None
            time.sleep(backoff_seconds(attempt, self.backoff_base, self.backoff_cap, delay, self.rng))
            attempt += 1


def parse_openai_spec(rest: str) -> tuple[str, str | None]:
    """``model@base_url`` -> (model, base_url); the URL may itself contain '@' only after the model."""
    model, sep, base_url = rest.partition("@")
    if not model:
        raise ValueError("openai policy needs a model: openai:<model>@<base_url>")
    if sep and not base_url:
        raise ValueError(f"openai policy {rest!r} has an empty URL after '@'")
    if sep and "://" not in base_url:
        base_url = "http://" + base_url  # the SDK refuses a URL without a scheme on every request
    return model, (base_url if sep else None)
