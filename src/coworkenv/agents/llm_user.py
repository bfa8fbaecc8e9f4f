"""An optional LLM user simulator on an OpenAI-compatible endpoint.

The scripted user decides *what* happens — which fact is revealed, whether a confirmation
is given, which follow-up comes next — so grading signals (asked_user, confirmed_before)
stay exactly as reproducible as with the scripted user. The LLM only decides *how it is
said*: it rewrites the scripted reply in the persona's voice, answering the agent's actual
message, and must keep every value verbatim. If the rewrite drops a value or the endpoint
fails, the scripted text is used, so an episode never breaks because of the simulator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from coworkenv.runtime.environment import Environment
from coworkenv.runtime.observation import Observation
from coworkenv.runtime.user import Reply, ScriptedUser
from coworkenv.spec.models import TaskSpec
from coworkenv.spec.user import UserScript
from coworkenv.trajectory import ToolCallRecord

if TYPE_CHECKING:
    from openai import OpenAI

PROMPT = """You play {persona}, talking with an AI assistant that works for you.
The assistant just wrote:
---
{agent}
---
Reply in one or two short sentences, in your own voice. Your reply must convey exactly this,
keeping these values verbatim: {values}
Content to convey: {script}
Reply with the message only."""


class LLMUser(ScriptedUser):
    """The scripted user's decisions, phrased by a chat model."""

    def __init__(
        self, script: UserScript, client: OpenAI, model: str, temperature: float = 0.7, today: date | None = None
    ) -> None:
        super().__init__(script, today)
        self.client = client
        self.model = model
        self.temperature = temperature
        self.failures = 0

    def respond(
        self, text: str, state: Mapping[str, object] | None = None, calls: Sequence[ToolCallRecord] = ()
    ) -> Reply:
        reply = super().respond(text, state, calls)
        if reply.kind == "end" or not reply.text:
            return reply
        values = [str(f.value) for f in self.script.hidden_facts if f.slot in reply.slots]
        phrased = self._phrase(text, reply.text, values)
        return Reply(reply.kind, phrased, reply.slots, reply.approved)

    def _phrase(self, agent: str, scripted: str, values: list[str]) -> str:
        prompt = PROMPT.format(
            persona=self.script.persona, agent=agent, values=", ".join(values) or "(none)", script=scripted
        )
        try:
            out = self.client.chat.completions.create(
                model=self.model, messages=[{"role": "user", "content": prompt}], temperature=self.temperature
            )
            text = (out.choices[0].message.content or "").strip()
        except Exception:  # the simulator must never end an episode: fall back to the script
            self.failures += 1
            return scripted
        return text if text and all(v in text for v in values) else scripted


class LLMUserEnvironment(Environment):
    """An Environment whose user replies are phrased by an LLM (see :class:`LLMUser`)."""

    def __init__(
        self,
        spec: TaskSpec,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        **kwargs: Any,
    ) -> None:
        # lazy: an optional extra (openai); the core and the CLI must run without it
        from openai import OpenAI

        self.client = OpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=2)
        self.user_model = model
        super().__init__(spec, **kwargs)

    def reset(self) -> Observation:
        obs = super().reset()
        self.user = LLMUser(self.spec.user, self.client, self.user_model, today=self.user.today)
        return obs
