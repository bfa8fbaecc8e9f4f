"""What every simulated workplace service is made of.

A service owns some collections of records (plain JSON-able dicts keyed by id, typed by a
pydantic model per collection) and exposes tools: methods marked with :func:`tool`,
tagged read or write, whose keyword arguments become a JSON Schema and a validator.

Records are never mutated in place: writes replace the record dict (copy-on-write). That
makes a reset a cheap copy of the outer dicts and lets diffs and ``unchanged`` checks
compare unchanged records by identity.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from coworkenv.services.arguments import changed_record, inserted_record
from coworkenv.services.damage import Damage
from coworkenv.services.formats import (
    Email,
    IsoDate,
    IsoDateTime,
    check_choice,
    check_date,
    check_datetime,
    check_email,
)
from coworkenv.services.indexes import index_key, reindex, reposition
from coworkenv.services.search_index import MIN_RECORDS, TextIndex
from coworkenv.services.tooling import ToolError, ToolInfo, ToolKind, args_model, tool

__all__ = [  # the checks and the tool decorator are part of what a service is written with
    "Collections",
    "Email",
    "IsoDate",
    "IsoDateTime",
    "Limit",
    "Offset",
    "Record",
    "RecordModel",
    "Result",
    "Service",
    "ToolError",
    "ToolInfo",
    "ToolKind",
    "check_choice",
    "check_date",
    "check_datetime",
    "check_email",
    "joined",
    "page",
    "query_words",
    "tool",
]

Record = dict[str, Any]
Result = dict[str, object]
"""What a tool returns: JSON-able values, which the router encodes for the agent as they are."""
SearchText = Callable[[Record], str]
"""A record's search text: what a tool's query words are looked for in."""
Shown = Callable[[Record], object]
"""What a page lists of one of its records."""
Limit = Annotated[int, Field(ge=1, le=50, description="page size")]
Offset = Annotated[int, Field(ge=0, description="index of the first result")]
Collections = dict[str, dict[str, Record]]
OnChange = Callable[[str, str, str, bool], None]  # service, collection, record id, removed


class RecordModel(BaseModel):
    """Base of the typed records: unknown fields are rejected so fixtures stay honest."""

    model_config = ConfigDict(extra="forbid")
    id: str


_HELPERS = frozenset(
    {
        "get",
        "insert",
        "update",
        "delete",
        "tools",
        "normalize_fixtures",
        "validate_record",
        "store",
        "restore",
        "lookup",
        "matching",
        "text_search",
    }
)


class Service:
    """A stateful simulated app. Subclasses set ``name``, ``records`` and define tools."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    records: ClassVar[dict[str, type[RecordModel]]]
    id_prefix: ClassVar[dict[str, str]] = {}
    damage: ClassVar[dict[str, Damage]] = {}
    """Per collection, the write that visibly spoils one of its records (see :mod:`coworkenv.services.damage`)."""
    _tools: ClassVar[dict[str, ToolInfo]]
    _usual_validation: ClassVar[bool] = True  # validate_record is Service's (a declared service has its own)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._tools = {}
        usual = vars(Service)["validate_record"].__func__
        cls._usual_validation = getattr(cls.validate_record, "__func__", None) is usual
        for attr, fn in inspect.getmembers(cls, inspect.isfunction):
            kind = getattr(fn, "__tool_kind__", None)
            if kind is None:
                continue
            if attr in _HELPERS:
                raise TypeError(f"{cls.__name__}.{attr} shadows a Service helper; use @tool(kind, name=...)")
            info = ToolInfo(
                name=f"{cls.name}_{getattr(fn, '__tool_name__', attr)}",
                service=cls.name,
                method=attr,
                kind=kind,
                description=inspect.cleandoc(fn.__doc__ or attr).split("\n\n")[0].replace("\n", " "),
                args_model=args_model(cls.name, fn),
            )
            cls._tools[info.name] = info

    def __init__(self, db: Collections, on_change: OnChange | None = None) -> None:
        self.db = db
        self.on_change = on_change
        self._indexes: dict[tuple[str, str, bool], dict[object, dict[str, None]]] = {}
        self._positions: dict[str, dict[str, int]] = {}  # per indexed collection: record id -> rank in the table
        self._lowered: dict[tuple[SearchText, str], tuple[Record, str]] = {}  # (text, id) -> (record, text lowered)
        self._texts: dict[str, dict[SearchText, TextIndex]] = {}  # per searched collection: its indexes by text

    # --- class-level helpers ---------------------------------------------------------

    @classmethod
    def tools(cls) -> dict[str, ToolInfo]:
        return cls._tools

    @classmethod
    def normalize_fixtures(cls, fixtures: dict[str, list[Record]]) -> dict[str, dict[str, Record]]:
        """Validate fixture records against the record models and fill defaults.

        Raises ValueError naming the collection, record index and field.
        """
        out: dict[str, dict[str, Record]] = {name: {} for name in cls.records}
        for collection, rows in fixtures.items():
            model = cls.records.get(collection)
            if model is None:
                raise ValueError(f"{cls.name}: unknown collection {collection!r}; known: {sorted(cls.records)}")
            for i, row in enumerate(rows):
                try:
                    rec = cls.validate_record(collection, row)
                except ValidationError as exc:
                    err = exc.errors()[0]
                    where = ".".join(str(p) for p in err["loc"])
                    raise ValueError(f"{cls.name}.{collection}[{i}].{where}: {err['msg']}") from None
                out[collection][rec["id"]] = rec
        return out

    @classmethod
    def validate_record(cls, collection: str, row: Record) -> Record:
        """The record as its model validates it, defaults filled (raises pydantic's ValidationError).

        ``model_validate(row).model_dump(mode="json")`` through the compiled validator and serializer directly:
        every write validates a record, and the two wrappers cost as much as the work."""
        model = cls.records[collection]
        rec = inserted_record(model, row)  # plain values the model would keep as they are: no model built
        if rec is not None:
            return rec
        return model.__pydantic_serializer__.to_python(  # type: ignore[no-any-return]
            model.__pydantic_validator__.validate_python(row), mode="json"
        )

    # --- record helpers for tools --------------------------------------------------------

    def get(self, collection: str, record_id: str) -> Record:
        rec = self.db[collection].get(record_id)
        if rec is None:
            raise ToolError(f"no {collection} record with id {record_id!r}")
        return rec

    def insert(self, collection: str, fields: Record) -> Record:
        """Validate and add a new record with a deterministic fresh id."""
        table = self.db[collection]
        prefix = self.id_prefix.get(collection, collection[:3])
        n = len(table) + 1
        rid = f"{prefix}-{n}"
        while rid in table:
            n += 1
            rid = f"{prefix}-{n}"
        row = {"id": rid, **fields}
        # the record as validate_record gives it, without its calls when the class keeps the usual validation
        rec: Record | None = inserted_record(self.records[collection], row) if self._usual_validation else None
        if rec is None:
            rec = self._validated(collection, row)
        self.store(collection, rec["id"], rec)
        return rec

    def update(self, collection: str, record_id: str, changes: Record) -> Record:
        """Replace a record with a validated, changed copy (never mutate in place)."""
        old = self.db[collection].get(record_id)  # as get() does, without its call: every update reads the record
        if old is None:
            raise ToolError(f"no {collection} record with id {record_id!r}")
        # None: the model must validate the whole
        rec: Record | None = changed_record(self.records[collection], old, changes)
        if rec is None:
            rec = self._validated(collection, {**old, **changes})
        self.store(collection, record_id, rec)
        return rec

    def delete(self, collection: str, record_id: str) -> Record:
        old = self.get(collection, record_id)
        self.store(collection, record_id, None)
        return old

    # --- the one way records change, and what is derived from them ----------------------------

    def store(self, collection: str, record_id: str, rec: Record | None, *, notify: bool = True) -> None:
        """Set a record (``rec``) or remove it (``None``), keeping indexes current and telling ``on_change``."""
        table = self.db[collection]
        old = table.get(record_id)
        positions = self._positions.get(collection)
        if positions is not None:  # ranks come with a collection's first index: without them it has none
            texts = self._texts.get(collection)  # (without ranks, any search index is unsure: see restore)
            if texts is not None:  # marked only: re-indexed by the next search, so a write costs the same
                for text_index in texts.values():
                    text_index.stale[record_id] = None
            if (old is None) != (rec is None):
                reposition(positions, table, record_id, rec is None)
            for (coll, field, lower), index in self._indexes.items():  # (an update of other fields moves nothing)
                if coll == collection and (old is None or rec is None or old.get(field) != rec.get(field)):
                    reindex(index, positions, record_id, old, rec, field, lower)
        if rec is None:
            table.pop(record_id, None)
        else:
            table[record_id] = rec
        if notify and self.on_change is not None:
            self.on_change(self.name, collection, record_id, rec is None)

    def restore(self, collection: str, records: dict[str, Record]) -> None:
        """Put a whole collection back as it was (its order too); its indexes are rebuilt when next used, its search
        indexes brought up to date by comparing every record (most are the very records indexed). Until a search
        or lookup makes the ranks again, :meth:`store` marks nothing stale: the unsure indexes need no marks."""
        table = self.db[collection]
        table.clear()
        table.update(records)
        for text_index in self._texts.get(collection, {}).values():
            text_index.unsure = True
        self._positions.pop(collection, None)
        for key in [k for k in self._indexes if k[0] == collection]:
            del self._indexes[key]

    def lookup(self, collection: str, field: str, value: object, *, lower: bool = False) -> list[Record]:
        """The records whose ``field`` equals ``value`` (compared lower-cased with ``lower``) in the collection's
        order, through an index built on first use and kept current by :meth:`store`, so a lookup by key costs
        what it finds.

        The order is the table's whatever the history (when the index was built, which writes moved a record
        between buckets and back): tools return it, so it must not depend on earlier episodes."""
        index = self._indexes.get((collection, field, lower))
        table = self.db[collection]
        if index is None:
            self._ranks(collection)
            index = {}
            for rid, rec in table.items():
                index.setdefault(index_key(rec.get(field), lower), {})[rid] = None
            self._indexes[(collection, field, lower)] = index
        bucket = index.get(value)
        return [] if bucket is None else [*map(table.__getitem__, bucket)]  # no comprehension frame: reads call this

    def _ranks(self, collection: str) -> dict[str, int]:
        """The collection's ranks (record id -> place in the table), made on first use and kept by :meth:`store`."""
        positions = self._positions.get(collection)
        if positions is None:
            positions = self._positions[collection] = {rid: i for i, rid in enumerate(self.db[collection])}
        return positions

    def text_search(self, collection: str, words: tuple[str, ...], text: SearchText) -> Iterable[Record]:
        """The records whose ``text`` holds every query word (as :meth:`matching` tests it), in the table's order.

        A collection of :data:`MIN_RECORDS` or more gets a trigram index on its first search (see
        :mod:`coworkenv.services.search_index`), so a search costs what it finds, not what the collection holds."""
        table = self.db[collection]
        if not words:
            return table.values()
        texts = self._texts.get(collection)
        index = None if texts is None else texts.get(text)
        if index is None:
            if len(table) < MIN_RECORDS:
                return self.matching(table.values(), words, text)
            index = self._texts.setdefault(collection, {})[text] = TextIndex(text, table)
        ranks = self._ranks(collection)  # made with the first index: from then on store marks what it writes
        found = index.find(words, table)
        found.sort(key=ranks.__getitem__)
        return [*map(table.__getitem__, found)]

    def matching(self, records: Iterable[Record], words: tuple[str, ...], text: SearchText) -> list[Record]:
        """The records whose ``text`` holds every query word: the scan. Each text is lower-cased once per record
        version and cached per text function (records are replaced, never mutated, so identity means the cached text
        is fresh); one loop, no call per record, as small collections are searched this way."""
        if not words:
            return list(records)
        lowered = self._lowered
        out = []
        for rec in records:
            key = (text, rec["id"])
            hit = lowered.get(key)
            if hit is None or hit[0] is not rec:
                hit = lowered[key] = (rec, text(rec).lower())
            hay = hit[1]
            for w in words:
                if w not in hay:
                    break
            else:
                out.append(rec)
        return out

    def _validated(self, collection: str, rec: Record) -> Record:
        try:
            return self.validate_record(collection, rec)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or collection
            raise ToolError(f"invalid {field}: {err['msg']}") from None


def joined(*fields: Any) -> str:
    """The fields of a record as one search text (None and non-text fields tolerated, as in :func:`text_match`)."""
    try:
        return " ".join(fields)
    except TypeError:
        return " ".join(str(f) for f in fields if f is not None)


def page(items: Iterable[Record], limit: int, offset: int, key: str = "items", shown: Shown | None = None) -> Result:
    """Paginate a result list: ``{key: [...], "total": n, "next_offset": int | None}``; a page that starts past the
    last result is empty and says so (``note``), so an agent paging on knows it is done rather than wrong.
    ``shown`` gives what the page lists of each of its records (the record itself without it)."""
    rows = list(items)
    chunk = rows[offset : offset + limit]
    nxt = offset + limit if offset + limit < len(rows) else None
    out: Result = {key: chunk if shown is None else [*map(shown, chunk)], "total": len(rows), "next_offset": nxt}
    if offset and offset >= len(rows):
        out["note"] = f"this page starts past the last result ({len(rows)} in all): no more pages"
    return out


@lru_cache(maxsize=1024)
def query_words(query: str) -> tuple[str, ...]:
    """The lower-cased words of a search query (cached: tools test many records per query)."""
    return tuple(query.lower().split())
