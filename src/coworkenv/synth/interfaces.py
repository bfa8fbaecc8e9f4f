"""Seeded interfaces: every tool of an environment shown under a naming family drawn from its job's seed.

The families a training bank draws are ``canonical`` (the tools as their services define them), ``verb_noun``
(``search_emails``), ``vendor`` (``gmail_search_messages``) and ``noun_verb`` (``emails_search``); ``camel``
(``searchEmails`` with ``pageSize``) is held out: only a bank that asks for held-out interfaces gets it, so
evaluation can ask for an interface no training environment showed. Within a family the verbs, nouns, vendor
names, argument names, paging names, result keys, description wording and field order are drawn once per
environment, each concept one way throughout (an API is consistent with itself). The rendering works on any tool
schema, declared services' included: a word the vocabulary does not know keeps its own spelling.

The ids are drawn with the rest: a training family shows them as the services make them (``tkt-104``), as issue
keys (``TKT-104``), snake case (``tkt_104``) or named and zero-padded (``ticket-00104``); the held-out family as
short upper-case keys (``T104``). A style that would show two of the spec's ids alike is not drawn (the ids stay).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import lru_cache

from coworkenv.runtime.ids import id_problems
from coworkenv.runtime.interface import arguments_of, interface_problems
from coworkenv.runtime.router import exposed_tools
from coworkenv.runtime.workspace import Workspace, prepared_state
from coworkenv.services.base import ToolInfo
from coworkenv.services.registry import Declared, service_class
from coworkenv.spec.interface import CANONICAL_ID, NAME_PATTERN, ORDERS, IdStyle, Interface, ToolRendering
from coworkenv.spec.models import TaskSpec

CANONICAL = "canonical"
TRAIN_STYLES = (CANONICAL, "verb_noun", "vendor", "noun_verb")
HELD_OUT_STYLES = ("camel",)
TRAIN_ID_STYLES = ("as_is", "upper", "snake", "padded")
HELD_OUT_ID_STYLES = ("short",)
INTERFACE_SETS = ("train", "held_out", "canonical")
"""What a bank draws from: the training families, the held-out ones, or the canonical interface alone."""

VERBS: dict[str, tuple[str, ...]] = {
    "search": ("search", "find", "query", "lookup"),
    "find": ("find", "search", "lookup"),
    "list": ("list", "browse", "get_all"),
    "get": ("get", "fetch", "retrieve"),
    "read": ("read", "get", "fetch", "open"),
    "view": ("view", "get", "show"),
    "create": ("create", "add", "new"),
    "update": ("update", "edit", "modify", "patch"),
    "send": ("send", "compose"),
    "post": ("post", "send", "publish"),
    "reply": ("reply", "respond"),
    "move": ("move", "file"),
    "delete": ("delete", "remove"),
    "cancel": ("cancel", "call_off"),
    "share": ("share", "grant"),
    "revoke": ("revoke", "unshare"),
    "append": ("append", "add_to"),
    "comment": ("comment", "add_comment"),
    "assign": ("assign", "reassign"),
    "approve": ("approve", "sign_off"),
    "reject": ("reject", "refuse"),
    "submit": ("submit", "file"),
    "log": ("log", "record"),
    "record": ("record", "enter"),
    "pay": ("pay", "settle"),
    "request": ("request", "ask_for"),
}
NOUNS: dict[str, tuple[str, ...]] = {
    "mail": ("email", "message", "mail"),
    "calendar": ("event", "meeting", "calendar"),
    "contacts": ("contact", "person", "people"),
    "documents": ("document", "doc", "page"),
    "tickets": ("ticket", "issue", "case"),
    "chat": ("chat", "message"),
    "drive": ("file", "drive"),
    "expenses": ("expense", "claim"),
    "hr": ("hr", "people"),
    "payments": ("payment", "billing"),
    "crm": ("crm", "sales"),
}
VENDORS: dict[str, tuple[str, ...]] = {
    "mail": ("gmail", "outlook", "mailbox"),
    "calendar": ("gcal", "outlook_calendar", "cal"),
    "contacts": ("people", "address_book", "directory"),
    "documents": ("docs", "notion", "confluence"),
    "tickets": ("helpdesk", "jira", "zendesk"),
    "chat": ("slack", "teams", "chatapp"),
    "drive": ("gdrive", "dropbox", "box"),
    "expenses": ("expensify", "concur", "spend"),
    "hr": ("workday", "bamboohr", "hris"),
    "payments": ("billing", "ap", "netsuite"),
    "crm": ("salesforce", "hubspot", "pipedrive"),
}
ARGS: dict[str, tuple[str, ...]] = {
    "query": ("query", "q", "keywords", "search_text"),
    "limit": ("limit", "page_size", "max_results", "per_page"),
    "offset": ("offset", "cursor", "start_index", "skip"),
    "body": ("body", "content", "message_body"),
    "subject": ("subject", "subject_line"),
    "to": ("to", "recipients"),
    "cc": ("cc", "copy_to"),
    "title": ("title", "name", "heading"),
    "description": ("description", "details", "summary"),
    "status": ("status", "state"),
    "priority": ("priority", "urgency"),
    "assignee": ("assignee", "assigned_to"),
    "attendees": ("attendees", "participants", "invitees"),
    "start": ("start", "start_time", "starts_at"),
    "end": ("end", "end_time", "ends_at"),
    "date": ("date", "day", "on_date"),
    "tags": ("tags", "labels"),
    "label": ("label", "tag"),
    "text": ("text", "message", "content"),
    "content": ("content", "text", "body_text"),
    "channel": ("channel", "channel_name", "room"),
    "reason": ("reason", "note", "justification"),
    "folder": ("folder", "folder_name", "location"),
    "email": ("email", "email_address"),
    "name": ("name", "full_name", "display_name"),
    "company": ("company", "organization", "org"),
    "amount": ("amount", "value", "sum"),
}
ID_FORMS = ("{stem}_id", "id", "{stem}_ref")
TOTALS = ("total", "total_count", "count", "total_results")
WRAPPERS = ("{key}", "items", "results", "data", "records")
DESCRIPTIONS = ("{d}", "{d0} ({app} API).", "{App}: {d}", "Use this to {dl}")
PLURAL_VERBS = frozenset({"search", "find", "list"})
_NAME = re.compile(NAME_PATTERN)


def _plural(noun: str) -> str:
    if noun.endswith("s") or noun in ("people", "mail", "hr", "crm", "billing", "sales", "drive", "calendar"):
        return noun
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


@lru_cache(maxsize=8192)
def _camel(words: tuple[str, ...]) -> str:
    parts = [p for w in words for p in w.split("_") if p]
    return parts[0].lower() + "".join(p[:1].upper() + p[1:] for p in parts[1:]) if parts else ""


class _Draw:
    """One environment's choices: each concept (a verb, a service's noun, an argument) drawn once, on first use."""

    def __init__(self, rng: random.Random, style: str) -> None:
        self.rng = rng
        self.style = style
        self.chosen: dict[str, str] = {}

    def pick(self, concept: str, options: Sequence[str]) -> str:
        if concept not in self.chosen:
            self.chosen[concept] = self.rng.choice(options)
        return self.chosen[concept]

    def word(self, words: Sequence[str]) -> str:
        """Words joined in the family's case."""
        return _camel(tuple(words)) if self.style == "camel" else "_".join(words)

    def app(self, service: str) -> str:
        return self.pick(f"vendor:{service}", VENDORS.get(service, (service, f"{service}_api", f"{service}_hub")))

    def tool_name(self, info: ToolInfo) -> str:
        """The tool's shown name: its verb and object (and vendor) in the family's order."""
        own = info.name
        op = own[len(info.service) + 1 :] if own.startswith(f"{info.service}_") else own
        verb, *rest = op.split("_")
        shown_verb = self.pick(f"verb:{verb}", VERBS.get(verb, (verb,)))
        if not rest:
            noun = self.pick(f"noun:{info.service}", NOUNS.get(info.service, (info.service,)))
            rest = [_plural(noun) if verb in PLURAL_VERBS else noun]
        if self.style == "vendor":
            return self.word([self.app(info.service), shown_verb, *rest])
        if self.style == "noun_verb":
            return self.word([*rest, shown_verb])
        return self.word([shown_verb, *rest])

    def arg_name(self, arg: str, ids: int) -> str:
        """An argument's shown name (``ids``: how many id arguments its tool takes)."""
        if arg in ARGS:
            return self.word([self.pick(f"arg:{arg}", ARGS[arg])])
        if arg.endswith("_id") and len(arg) > 3:
            form = self.pick("id_form", ID_FORMS)
            return self.word([(form if ids == 1 or form != "id" else ID_FORMS[0]).format(stem=arg[:-3])])
        return self.word([arg])

    def description(self, info: ToolInfo) -> str | None:
        template = self.pick("description", DESCRIPTIONS)
        if template == "{d}":
            return None
        app = self.app(info.service) if self.style == "vendor" else info.service
        d = info.description.rstrip()
        dl = d[:1].lower() + d[1:]
        return template.format(d=d, d0=d.rstrip("."), dl=dl, app=app, App=app[:1].upper() + app[1:])

    def results(self, info: ToolInfo, wrapper: str | None, args: Sequence[str]) -> dict[str, str]:
        """The tool's result keys renamed: a page's total, its next offset (named after the offset argument) and
        the key its records come under."""
        if wrapper is None and "limit" not in args and "offset" not in args:
            return {}
        offset = self.pick("arg:offset", ARGS["offset"])
        renames = {"total": self.word([self.pick("total", TOTALS)]), "next_offset": self.word(["next", offset])}
        if wrapper is not None:
            renames[wrapper] = self.word([self.pick("wrapper", WRAPPERS).format(key=wrapper)])
        return {k: v for k, v in renames.items() if k != v}


def _renamed_args(draw: _Draw, info: ToolInfo) -> dict[str, str]:
    """The tool's argument renames; one that would meet another argument's name keeps its own."""
    own = arguments_of(info)
    ids = sum(a.endswith("_id") for a in own)
    taken: set[str] = set()
    renames = {}
    for arg in own:
        shown = draw.arg_name(arg, ids)
        if shown in taken or (shown != arg and shown in own) or not _NAME.match(shown):
            shown = arg
        taken.add(shown)
        if shown != arg:
            renames[arg] = shown
    return renames


def _page_key(info: ToolInfo, declared: Declared) -> str | None:
    """For a read tool that takes no required argument and answers with a page (``total``, ``next_offset`` and
    one list), the key of that list: found by calling it once in an empty workspace of its service, once per
    tool."""
    hit = _PAGE_KEYS.get(info.name)
    if hit is not None and hit[0] is info:
        return hit[1]
    key = None
    if info.kind == "read" and not any(f.is_required() for f in info.args_model.model_fields.values()):
        service = Workspace({info.service: {}}, declared).services[info.service]
        try:
            result = getattr(service, info.method)()
        except Exception:  # a tool that needs more than its defaults shows no page here
            result = None
        if isinstance(result, dict) and "total" in result and "next_offset" in result:
            lists = [k for k, v in result.items() if isinstance(v, list)]
            key = lists[0] if len(lists) == 1 else None
    if len(_PAGE_KEYS) >= 4096:  # declared services make new tools per declaration: stay bounded
        _PAGE_KEYS.clear()
    _PAGE_KEYS[info.name] = (info, key)
    return key


_PAGE_KEYS: dict[str, tuple[ToolInfo, str | None]] = {}


def _names(draw: _Draw, every: dict[str, ToolInfo]) -> dict[str, str]:
    """Shown names, distinct: a name met twice is prefixed with its service, then left as the tool's own."""
    taken = set()
    out = {}
    for tool, info in every.items():
        name = draw.tool_name(info)
        for candidate in (name, draw.word([info.service, name]), tool):
            if candidate == tool or (candidate not in taken and candidate not in every and _NAME.match(candidate)):
                name = candidate
                break
        taken.add(name)
        out[tool] = name
    return out


def draw_interface(spec: TaskSpec, seed: int, which: str = "train") -> Interface | None:
    """The interface of an environment of ``spec`` drawn by ``seed`` from the families ``which`` names (None: the
    canonical one)."""
    if which not in INTERFACE_SETS:
        raise ValueError(f"unknown interfaces {which!r}; known: {', '.join(INTERFACE_SETS)}")
    rng = random.Random(seed)
    style = CANONICAL if which == CANONICAL else rng.choice(TRAIN_STYLES if which == "train" else HELD_OUT_STYLES)
    if style == CANONICAL:
        return None
    draw = _Draw(rng, style)
    declared = spec.declared_services
    every = exposed_tools(list(spec.services), None, declared)
    tools = {}
    for tool, name in _names(draw, every).items():
        info = every[tool]
        shown = None if name == tool else name
        description = draw.description(info)
        args = _renamed_args(draw, info)
        results = draw.results(info, _page_key(info, declared), arguments_of(info))
        if shown or description or args or results:
            tools[tool] = ToolRendering(name=shown, description=description, args=args, results=results)
    order = rng.choice(ORDERS)
    ids = draw_ids(spec, rng, HELD_OUT_ID_STYLES if style in HELD_OUT_STYLES else TRAIN_ID_STYLES)
    interface = Interface(style=style, tools=tools, order=order, ids=ids)
    problems = interface_problems(interface, every)
    if problems:  # the names above are kept apart by construction
        raise AssertionError(f"drawn interface does not fit: {problems}")
    return interface


def draw_ids(spec: TaskSpec, rng: random.Random, kinds: Sequence[str]) -> IdStyle | None:
    """The id style of an environment of ``spec``, one of ``kinds`` (None: the ids as the services make them, or
    a style that would show two of the spec's ids alike)."""
    kind = rng.choice(kinds)
    named = _id_names(spec)
    if kind == "upper":
        ids = IdStyle(case="upper")
    elif kind == "snake":
        ids = IdStyle(separator="_")
    elif kind == "padded":
        ids = IdStyle(width=rng.choice((4, 5, 6)), prefixes={p: n for p, n in named.items() if n != p})
    elif kind == "short":
        ids = IdStyle(case="upper", separator="", prefixes=_short(named))
    else:
        return None
    state = prepared_state(spec.services, spec.declared_services)
    every = [rid for colls in state.values() for recs in colls.values() for rid in recs]
    # one id of each prefix stands for those the services will make
    return None if id_problems(ids, [*every, *(f"{p}-1" for p in named)]) else ids


def _id_names(spec: TaskSpec) -> dict[str, str]:
    """Every id prefix of the spec's services and records -> the word its records are called by (``tkt`` ->
    ``ticket``; a word two collections share is prefixed by the service)."""
    out: dict[str, str] = {}
    for service in spec.services:
        cls = service_class(service, spec.declared_services)
        for collection in cls.records:
            prefix = cls.id_prefix.get(collection, collection[:3])
            word = _letters(_singular(collection))
            if prefix not in out:
                out[prefix] = word if word not in out.values() else _letters(service + word)
    for colls in prepared_state(spec.services, spec.declared_services).values():
        for recs in colls.values():
            for m in filter(None, map(CANONICAL_ID.fullmatch, recs)):
                out.setdefault(m[1], m[1])
    return out


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _letters(word: str) -> str:
    return "".join(c for c in word.lower() if "a" <= c <= "z")[:24] or "id"


def _short(named: dict[str, str]) -> dict[str, str]:
    """Each prefix -> the shortest start of its word no other prefix took (``ticket`` -> ``t``)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for prefix in sorted(named):
        word = named[prefix]
        short = next((word[:k] for k in range(1, len(word) + 1) if word[:k] not in taken), prefix)
        out[prefix] = short
        taken.add(short)
    return out
