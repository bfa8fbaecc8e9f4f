"""An optional LLM user simulator on an OpenAI-compatible endpoint, in one of two roles.

Phrasing (:class:`LLMUser`, every spec with a script): the scripted user decides *what*
happens — which fact is revealed, whether a confirmation is given, which follow-up comes
next — so grading signals (asked_user, confirmed_before) stay exactly as reproducible as
with the scripted user. The LLM only decides *how it is
said*: it rewrites the scripted reply in the persona's voice, answering the agent's actual
message, and must keep every value verbatim. If the rewrite drops a value or the endpoint
fails, the scripted text is used, so an episode never breaks because of the simulator.

Playing a persona (:class:`PersonaUser`, a spec whose ``user.persona_turns`` is set: an imported
Claw-Eval user agent): there is no script to phrase, so the LLM *is* the user, as in Claw-Eval.
It sees its persona and the conversation, answers from the persona's details, and says
``[DONE]`` when satisfied; it replies at most ``persona_turns`` times, then the episode ends.
A reply with nothing usable in it is replaced by the script's fallback reply (and counted), as
the phrasing user falls back to its script. An endpoint that cannot be reached raises
:class:`UserEndpointError`: a persona that never spoke must not be scored as a conversation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from coworkenv.prompt_files import package_template
from coworkenv.runtime.environment import Environment
from coworkenv.runtime.observation import Observation
from coworkenv.runtime.user import Reply, ScriptedUser
from coworkenv.spec.models import TaskSpec
from coworkenv.spec.user import UserScript
from coworkenv.trajectory import ToolCallRecord

if TYPE_CHECKING:
    from openai import OpenAI


def _prompt(name: str, **values: str) -> str:
    """The prompt ``templates/<name>.md`` filled in (the file's trailing newline dropped)."""
    return package_template("coworkenv.agents", name).substitute(values).rstrip("\n")


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
        prompt = _prompt(
            "user_phrase",
            persona=self.script.persona,
            agent=agent,
            values=", ".join(values) or "(none)",
            script=scripted,
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


DONE = "[DONE]"
MAX_REPLY = 2000
"""Characters of a persona reply kept: a model that rambles on is cut, not passed on whole."""


class UserEndpointError(RuntimeError):
    """The persona's endpoint failed (unreachable, or an error after the client's retries): names the ``--user``
    spec, so the run can say which."""


class PersonaUser(ScriptedUser):
    """An LLM playing the spec's persona for at most ``persona_turns`` replies (Claw-Eval's user agent)."""

    def __init__(self, script: UserScript, client: OpenAI, model: str, *, where: str, seed: int = 0) -> None:
        super().__init__(script)
        self.client = client
        self.model = model
        self.where = where
        self.seed = seed
        self.budget = script.persona_turns or 0
        self.replies = 0
        self.failures = 0
        self.transcript = [f"[User]: {script.opening}"]

    def respond(
        self, text: str, state: Mapping[str, object] | None = None, calls: Sequence[ToolCallRecord] = ()
    ) -> Reply:
        """The persona's answer to a message addressed to it; ``end`` once satisfied or out of replies."""
        self.transcript.append(f"[Assistant]: {text.strip()}")
        if self.replies >= self.budget:
            return Reply("end", None, [])
        said = self._ask()
        if DONE in said:
            return Reply("end", None, [])
        self.replies += 1
        kind, reply = "persona", usable(said)
        if reply is None:
            self.failures += 1
            kind, reply = "fallback", self.script.fallback_reply
        self.transcript.append(f"[User]: {reply}")
        return Reply(kind, reply, [])

    def _ask(self) -> str:
        system = _prompt("persona_system", persona=self.script.persona)
        turn = _prompt("persona_turn", transcript="\n".join(self.transcript))
        try:
            out = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": turn}],
                temperature=0.7,
                seed=self.seed,  # the episode's: a server that honours it replays the same persona
            )
        except Exception as exc:  # the client's own retries are spent: the run must not go on without the user
            raise UserEndpointError(f"--user {self.where}: {type(exc).__name__}: {exc}") from None
        choices = getattr(out, "choices", None) or []
        return str((choices[0].message.content if choices else "") or "").strip()


def usable(text: str) -> str | None:
    """A persona reply as the agent gets it: without a copied ``[User]:`` tag, at most ``MAX_REPLY`` characters;
    None when nothing is said (empty, or no letter or digit in it)."""
    text = text.removeprefix("[User]:").strip()
    if not any(ch.isalnum() for ch in text):
        return None
    return text[:MAX_REPLY]


class LLMUserEnvironment(Environment):
    """An Environment whose user is an LLM: phrasing the script (:class:`LLMUser`), or playing the spec's persona
    in full when it has ``persona_turns`` (:class:`PersonaUser`)."""

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
        self.where = f"openai:{model}@{base_url}" if base_url else f"openai:{model}"
        super().__init__(spec, **kwargs)

    def reset(self) -> Observation:
        obs = super().reset()
        self.user = self._user()
        return obs

    def _user(self) -> ScriptedUser:
        """A persona the LLM plays in full when the spec has one, else the script phrased by the LLM."""
        if self.spec.user.persona_turns is not None:
            return PersonaUser(self.spec.user, self.client, self.user_model, where=self.where, seed=self.seed)
        return LLMUser(self.spec.user, self.client, self.user_model, today=self._today)
