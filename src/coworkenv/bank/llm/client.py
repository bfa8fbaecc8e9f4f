"""The generator's endpoint: any OpenAI-compatible chat-completions server.

Transient failures (429, 5xx, timeouts, dropped connections) are retried a bounded number
of times with backoff, honouring ``Retry-After``; anything else — a refusing endpoint
(401, 403, 404), or one still failing after the retries — raises :class:`EndpointError`,
which stops the bank run with a clear message instead of filling it with rejections.
A server that rejects ``response_format`` is asked again without it, once, and never again.
"""

from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from coworkenv.agents.openai_policy import backoff_seconds, parse_openai_spec, retry_after_seconds

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class EndpointError(RuntimeError):
    """The endpoint is dead or refuses us: the run must stop."""


@dataclass(frozen=True)
class Reply:
    """One completion: its text and what it cost."""

    content: str
    prompt_tokens: int
    completion_tokens: int
    retries: int


def parse_llm_spec(spec: str) -> tuple[str, str | None]:
    """``openai:<model>@<base_url>`` -> (model, base_url)."""
    kind, _, rest = spec.partition(":")
    if kind != "openai" or not rest:
        raise ValueError(f"unknown generator {spec!r}; expected openai:<model>@<base_url>")
    return parse_openai_spec(rest)


class LLMClient:
    """Thread-safe completions with bounded retries (one SDK client shared by the workers)."""

    def __init__(
        self,
        spec: str,
        *,
        api_key_env: str = DEFAULT_KEY_ENV,
        temperature: float = 0.7,
        max_tokens: int = 8192,
        timeout: float = 300.0,
        max_retries: int = 4,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
    ) -> None:
        self.model, base_url = parse_llm_spec(spec)  # a bad spec is reported whether or not the SDK is there
        # lazy: an optional extra (openai); the core and the CLI must run without it
        from openai import OpenAI

        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.structured = True
        self._lock = threading.Lock()
        self._rng = random.Random(0)
        self.client = OpenAI(
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            api_key=os.environ.get(api_key_env) or "EMPTY",
            timeout=timeout,
            max_retries=0,
        )

    def complete(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None, seed: int = 0) -> Reply:
        """One chat completion; ``schema`` asks for JSON-schema-constrained output where supported."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": seed,
        }
        if schema is not None and self.structured:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "TaskSpec", "schema": schema, "strict": False},
            }
        response, retries = self._create(request)
        message = response.choices[0].message
        usage = response.usage
        return Reply(
            content=message.content or getattr(message, "refusal", None) or "",
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            retries=retries,
        )

    def _create(self, request: dict[str, Any]) -> tuple[Any, int]:
        # lazy: an optional extra (openai); the core and the CLI must run without it
        import openai

        transient = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError)
        attempt = 0
        while True:
            try:
                response = self.client.chat.completions.create(**request)
                if not getattr(response, "choices", None):
                    raise EndpointError(f"{self.model}: the server answered without any choice")
                return response, attempt
            except openai.APIStatusError as exc:
                if exc.status_code == 400 and "response_format" in request:
                    self.structured = False  # a server without structured output: plain JSON from here on
                    request = {k: v for k, v in request.items() if k != "response_format"}
                    continue
                if exc.status_code < 500 and exc.status_code != 429:
                    raise EndpointError(
                        f"{self.model}: the endpoint refused the request ({exc.status_code}): {_brief(exc)}"
                    ) from None
                if attempt >= self.max_retries:
                    raise EndpointError(
                        f"{self.model}: still failing after {attempt + 1} tries ({exc.status_code}): {_brief(exc)}"
                    ) from None
                delay = retry_after_seconds(exc)
            except transient as exc:
                if attempt >= self.max_retries:
                    raise EndpointError(
                        f"{self.model}: endpoint unreachable after {attempt + 1} tries: {type(exc).__name__}: {exc}"
                    ) from None
                delay = retry_after_seconds(exc)
            with self._lock:
                pause = backoff_seconds(attempt, self.backoff_base, self.backoff_cap, delay, self._rng)
            time.sleep(pause)
            attempt += 1


def _brief(exc: Exception) -> str:
    text = str(getattr(exc, "message", None) or exc)
    return text if len(text) <= 300 else text[:300] + "…"
