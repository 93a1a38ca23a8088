"""Readers of the session layouts that came before today's (schemas 1 to 3), for the converter.

The product reads one layout (compiler_core/session/packed.py). A file saved by an older build is
read here, completed with what its build did not store yet, and written in today's layout by
bench/convert_sessions.py, whose save checks every value as a load does:

- schema 1: one JSON object per dataclass, each link in both directions;
- schemas 2 and 3: today's positional rows, with a ``fields`` header naming each class's fields
  in the order its rows use (2 lacks `Compile.run` and `Session.source_origins`).

What an older file lacks is derived from the session alone, or by the builder's own code:
a log's second run kept apart only by compile ids (`0/0#2`), where each source text came from,
and the decomposition tables.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import cache
from typing import Any

from compiler_core.analysis.decompositions import compile_decomposition
from compiler_core.session.links import LinkIndex
from compiler_core.session.model import SCHEMA_VERSION, Compile, Session
from compiler_core.session.packed import decode_links
from compiler_core.session.source_quotes import CAPTURES, quote_text, quoted_lines
from compiler_core.session.vocab import SourceOrigin
from compiler_core.session.wire import INTERNED

_PRIMITIVES = (str, int, float, bool, type(None))


class LegacyFormatError(ValueError):
    """Not a session any earlier build wrote."""


def legacy_session(data: Any) -> Session:
    """The session of a decoded schema-1, 2 or 3 file, completed as today's builder stores it."""
    if not isinstance(data, dict) or not isinstance(data.get("schema_version"), int):
        raise LegacyFormatError("not a CompileScope session (no schema_version)")
    version = data["schema_version"]
    if version == 1:
        session: Session = from_jsonable(Session, data)
    elif version in (2, 3):
        session = _Decoder(data).decoder(Session)(data["session"])
    else:
        raise LegacyFormatError(f"schema {version} is not one an earlier build wrote")
    session = dataclasses.replace(session, schema_version=SCHEMA_VERSION)
    if version < 3:
        session = runs_from_ids(session)
    return with_missing_decompositions(with_source_origins(session))


# ----------------------------------------------------------------------------- schema 1


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any) -> Any:
    """A value of type `tp` from schema 1's JSON, unknown dataclass fields ignored."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _from_union(typing.get_args(tp), data)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(data, dict):
            raise LegacyFormatError(f"expected an object for {tp.__name__}, got {type(data).__name__}")
        hints = _hints(tp)
        return tp(**{f.name: from_jsonable(hints[f.name], data[f.name])
                     for f in dataclasses.fields(tp) if f.name in data})  # fmt: skip
    if origin is tuple:
        return tuple(from_jsonable(_tuple_item(tp), v) for v in data)
    if origin is dict:
        _, val_tp = typing.get_args(tp)
        return {str(k): from_jsonable(val_tp, v) for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def _from_union(args: tuple[Any, ...], data: Any) -> Any:
    if data is None:
        return None
    for arg in args:
        if arg in (int, str, float, bool) and isinstance(data, arg):
            return data
        if dataclasses.is_dataclass(arg) and isinstance(data, dict):
            return from_jsonable(arg, data)
    return from_jsonable(next(a for a in args if a is not type(None)), data)


def _tuple_item(tp: Any) -> Any:
    args = typing.get_args(tp)
    return args[0] if len(args) == 2 and args[1] is Ellipsis else Any


# ------------------------------------------------------------------------- schemas 2 and 3


class _Decoder:
    """Rows read through the file's own ``fields`` header (its order, its names)."""

    def __init__(self, data: dict[str, Any]) -> None:
        fields = data.get("fields")
        if not isinstance(fields, dict):
            raise LegacyFormatError("missing the 'fields' layout")
        self.stored: dict[str, list[str]] = fields
        self._decoders: dict[type, Any] = {}
        raw_tables = data.get("tables") or {}
        self.tables: dict[type, list[Any]] = {}
        for cls in INTERNED:
            dec = self.decoder(cls)
            self.tables[cls] = [dec(r) for r in raw_tables.get(cls.__name__, [])]

    def decoder(self, cls: type) -> Any:
        found = self._decoders.get(cls)
        if found is None:
            found = self._decoders[cls] = self._make(cls)
        return found

    def _make(self, cls: type) -> Any:
        hints = typing.get_type_hints(cls)
        current = {f.name for f in dataclasses.fields(cls)}
        stored = self.stored.get(cls.__name__) or [f.name for f in dataclasses.fields(cls)]
        plan = [(i, name, decode_links if (cls is Session and name == "links") else self._conv(hints[name]))
                for i, name in enumerate(stored) if name in current]  # fmt: skip

        def decode(row: Any) -> Any:
            if not isinstance(row, list):
                raise LegacyFormatError(f"expected a row for {cls.__name__}, got {type(row).__name__}")
            return cls(**{n: (row[i] if c is None else c(row[i])) for i, n, c in plan if i < len(row)})

        return decode

    def _conv(self, tp: Any) -> Any:
        origin = typing.get_origin(tp)
        if tp is float:
            return lambda v: float(v) if isinstance(v, int) else v
        if tp in _PRIMITIVES or tp is Any:
            return None
        if origin in (typing.Union, types.UnionType):
            inner = [a for a in typing.get_args(tp) if a is not type(None)]
            if all(a in _PRIMITIVES for a in inner):
                return None
            if len(inner) == 1:
                opt = self._conv(inner[0])
                return None if opt is None else (lambda v: None if v is None else opt(v))
            return lambda v: from_jsonable(tp, v)
        if origin is tuple:
            each = self._conv(_tuple_item(tp))
            return tuple if each is None else (lambda v: tuple(each(x) for x in v))
        if origin is dict:
            conv = self._conv(typing.get_args(tp)[1])
            return dict if conv is None else (lambda v: {str(k): conv(x) for k, x in v.items()})
        if isinstance(tp, type) and tp in INTERNED:
            table = self.tables.get(tp)
            return self.decoder(tp) if table is None else table.__getitem__
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return lambda v: self.decoder(tp)(v)
        return lambda v: from_jsonable(tp, v)


# ------------------------------------------------------------------ what older files lack


def runs_from_ids(session: Session) -> Session:
    """Before schema 3 a log's second run was kept apart only by its ids (`0/0#2`): the suffix
    is that compile's run."""
    def run_of_id(c: Compile) -> Compile:
        _, sep, tail = c.compile_id.rpartition("#")
        if not sep or not tail.isdigit() or int(tail) < 2 or c.run:
            return c
        return dataclasses.replace(c, run=int(tail) - 1)

    return dataclasses.replace(session, compiles=tuple(map(run_of_id, session.compiles)))


def with_source_origins(session: Session) -> Session:
    """A session saved before `source_origins` existed, with them derived: texts an old build
    rebuilt or aligned from another version (its notes say "rebuilt") become the log's quotes
    alone; a capture's texts are its own; a log's other texts were read from the importing machine."""
    if session.source_origins or not session.sources:
        return session
    quotes: dict[str, dict[int, str]] | None = None
    sources, origins = dict(session.sources), {}
    notes = dict(session.source_notes)
    owns = {"trace": SourceOrigin.LOOKUP, **dict.fromkeys(CAPTURES, SourceOrigin.CAPTURE)}
    own = owns.get(session.meta.origin)
    for path in session.sources:
        note = notes.get(path, "")
        if "rebuilt" in note or note.startswith("left out"):
            if quotes is None:
                quotes = quoted_lines(session.compiles)
            sources[path] = quote_text(quotes.get(path, {}))
            origins[path] = SourceOrigin.QUOTE
            notes[path] = f"{note} (saved by an older CompileScope; now the log's quoted lines alone)"
        elif own is not None:  # (a session made by hand, of no known origin, stays unmarked)
            origins[path] = own
    if not origins:
        return session
    return dataclasses.replace(session, sources=sources, source_notes=notes, source_origins=origins)


def with_missing_decompositions(session: Session) -> Session:
    """The decomposition tables a session saved before they were stored lacks, by the builder's
    own code; a session that has them is returned as is."""
    if not any(c.decomposition is None and c.dynamo_graph is not None for c in session.compiles):
        return session
    index = LinkIndex(session.links)
    compiles = tuple(dataclasses.replace(c, decomposition=compile_decomposition(c, index))
                     if c.decomposition is None and c.dynamo_graph is not None else c
                     for c in session.compiles)  # fmt: skip
    return dataclasses.replace(session, compiles=compiles)
