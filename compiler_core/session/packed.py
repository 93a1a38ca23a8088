"""The session file's layout: positional rows, shared tables, links stored once. Plain JSON.

Why not one JSON object per dataclass: a 32-layer Llama session spelled every field name and
every node's source location (a 90-character path plus the line's code) 30,000 times, and stored
each link in both directions, five to seven times the bytes of this layout.

Layout of the top-level object:

- ``schema_version``: `SCHEMA_VERSION`; a file of another version is refused with what to do.
- ``tables``: ``SourceLoc`` and ``TensorMeta`` rows, each stored once; a field of those types holds
  the row's index. A deep model repeats a few hundred of them over its nodes.
- ``session``: the `Session` row. Its ``links`` slot holds `encode_links`'s form, not a mapping.

Every row is a list of its class's fields in declaration order, trailing default values dropped;
a reader takes a short row's missing fields as their defaults and ignores a long row's extra
cells, so fields are only ever appended (wire.py). The rows are written from the dataclasses'
type hints here and read back through the structs wire.py derives from the same hints: msgspec
checks every value's type while it parses. Nothing here executes data.
"""

from __future__ import annotations

import bisect
import dataclasses
import operator
import types
import typing
from collections import defaultdict
from collections.abc import Callable, Mapping
from enum import Enum
from functools import cache
from typing import Any

import msgspec

from compiler_core.session.model import SCHEMA_VERSION, Graph, Kernel, Session
from compiler_core.session.refs import split_prefix
from compiler_core.session.wire import (
    INTERNED,
    ROW,
    ModelMaker,
    bad_value,
    stored_file,
    stored_struct,
    tuple_item,
)

_SHARED: tuple[type, ...] = (Graph, Kernel)  # encoded once per object (frozen, held by the session)
_PRIMITIVES = (str, int, float, bool, type(None))


# ----------------------------------------------------------------------------------------- links


def encode_links(links: Mapping[str, tuple[str, ...]]) -> list[Any]:
    """Each undirected link once, grouped by the pair of ref prefixes (kind|rank|compile|):
    ``[[prefix_a, prefix_b, [key_a, key_b, key_a, key_b, ...]], ...]``.

    The in-memory `Session.links` keeps both directions (the explorer's index looks up either
    end); disk keeps one, and the prefix of a ref is written once per group, not once per ref."""
    groups: dict[str, dict[str, list[str]]] = defaultdict(dict)
    split: dict[str, tuple[str, str]] = {}  # each ref is split once, not once per link (120k)
    if _BUILT and _BUILT[0] is links:  # both directions listed, targets sorted: no checks needed
        split = _split_sorted(links)
        for a, targets in links.items():
            pa, ka = split[a]
            by_prefix = groups[pa]
            current: str | None = None
            run: list[str] = []
            # targets are sorted, so those of one prefix are a run: one group lookup per run
            for b in targets[bisect.bisect_right(targets, a) :]:
                pb, kb = split[b]
                if pb is not current:
                    current = pb
                    run = by_prefix.setdefault(pb, [])
                run.append(ka)
                run.append(kb)
        return [[pa, pb, groups[pa][pb]] for pa in sorted(groups) for pb in sorted(groups[pa])]
    sets: dict[str, frozenset[str]] = {}  # a hub's targets as a set: `in` on its tuple is linear
    for a, targets in links.items():
        pa, ka = split.get(a) or split.setdefault(a, split_prefix(a))
        by_prefix = groups[pa]
        for b in targets:
            if a > b:  # stored once: under the smaller ref, unless the other direction is missing
                back: tuple[str, ...] | frozenset[str] = links.get(b, ())
                if len(back) > 8:
                    back = sets.get(b) or sets.setdefault(b, frozenset(back))
                if a in back:
                    continue
            pb, kb = split.get(b) or split.setdefault(b, split_prefix(b))
            keys = by_prefix.get(pb)
            if keys is None:
                keys = by_prefix[pb] = []
            keys += (ka, kb)
    return [[pa, pb, groups[pa][pb]] for pa in sorted(groups) for pb in sorted(groups[pa])]


_BUILT: list[Mapping[str, tuple[str, ...]]] = []


def mark_built(links: Mapping[str, tuple[str, ...]]) -> None:
    """`links` is a `LinkBuilder.freeze()` result that nothing changes afterwards: every link is
    listed under both its ends and every target tuple is sorted, so `encode_links` may take each
    link from its smaller end without checking the other (half the work; a 7-rank deep model has
    over a million link ends). Only the map marked last is remembered (and kept alive)."""
    _BUILT[:] = [links]


def decode_links(data: Any) -> dict[str, tuple[str, ...]]:
    """`encode_links`'s groups (already type-checked) back to both directions, targets sorted."""
    adj: dict[str, list[str]] = defaultdict(list)
    for group in data:
        pa, pb, keys = group
        for i in range(0, len(keys) - 1, 2):
            a, b = pa + keys[i], pb + keys[i + 1]
            if a != b:
                adj[a].append(b)
                adj[b].append(a)
    return {k: tuple(sorted(set(v))) for k, v in sorted(adj.items())}


def _split_sorted(links: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, str]]:
    """`split_prefix` of every key of a built link map, whose keys are sorted: refs of one prefix
    are a run, so a ref that starts with the run's prefix has that prefix (a prefix is exactly
    three `|`-ended fields) and only the first ref of a run is split. Every ref of one run
    shares one prefix string (`encode_links` compares them by identity)."""
    out: dict[str, tuple[str, str]] = {}
    prefix = None
    cut = 0
    for ref in links:
        if prefix is None or not ref.startswith(prefix):
            prefix, _ = split_prefix(ref)
            cut = len(prefix)
            if not prefix:  # not an encoded ref: kept whole, never a run
                out[ref] = ("", ref)
                prefix = None
                continue
        out[ref] = (prefix, ref[cut:])
    return out


# -------------------------------------------------------------------------------------- encoding


class _Tables:
    def __init__(self) -> None:
        self.rows: dict[str, list[Any]] = {cls.__name__: [] for cls in INTERNED}
        self._index: dict[type, dict[Any, int]] = {cls: {} for cls in INTERNED}
        # By identity first: the parser shares one object per distinct value, and hashing a
        # dataclass by value runs Python code (60k calls for a deep model). The session holds
        # every object alive while it is packed, so ids are not reused meanwhile.
        self._by_id: dict[int, int] = {}
        # Rows of whole graphs and kernels by identity: the builder shares one parsed graph between
        # compiles and ranks that logged the same text (7 ranks of one model: one encoding).
        self.shared_rows: dict[int, list[Any]] = {}

    def intern(self, cls: type, value: Any) -> int:
        found = self._by_id.get(id(value))
        if found is not None:
            return found
        index = self._index[cls]
        found = index.get(value)
        if found is None:
            found = index[value] = len(index)
            self.rows[cls.__name__].append(_encoder(cls)(value, self))
        self._by_id[id(value)] = found
        return found


def pack(session: Session) -> dict[str, Any]:
    tables = _Tables()
    row = _encoder(Session)(session, tables)
    return {"schema_version": SCHEMA_VERSION, "tables": tables.rows, "session": row}


@cache
def _encoder(cls: type) -> Callable[[Any, _Tables], list[Any]]:
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    convs = [_enc_conv(hints[f.name]) for f in fields]
    if cls is Session:
        convs[names.index("links")] = lambda v, t: encode_links(v)
    trailing = [_default_test(_default(f)) for f in fields]
    # One C call reads every field (a 9-field Node: 9 getattr calls otherwise, 36k nodes); only
    # the fields that need converting run Python code.
    get_all = operator.attrgetter(*names) if len(names) > 1 else (lambda v: (getattr(v, names[0]),))
    conv_at = [(i, c) for i, c in enumerate(convs) if c is not None]

    def encode(value: Any, tables: _Tables) -> list[Any]:
        row = list(get_all(value))
        for k, c in conv_at:
            row[k] = c(row[k], tables)
        i = len(row)
        while i and trailing[i - 1](row[i - 1]):
            i -= 1
        del row[i:]
        return row

    if cls in _SHARED:

        def encode_shared(value: Any, tables: _Tables) -> list[Any]:
            found = tables.shared_rows.get(id(value))
            if found is None:
                found = tables.shared_rows[id(value)] = encode(value, tables)
            return found

        return encode_shared
    return encode


_MISSING = object()


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return _MISSING


def _never(_value: Any) -> bool:
    return False


def _default_test(default: Any) -> Callable[[Any], bool]:
    """A fast test for "this encoded value is the field's default" (trailing ones are dropped)."""
    if default is _MISSING or dataclasses.is_dataclass(default):
        return _never
    if default is None:
        return lambda v: v is None
    if isinstance(default, tuple | dict) and not default:
        return lambda v: type(v) in (tuple, list, dict) and not v
    return lambda v: type(v) is type(default) and v == default


def _enc_conv(tp: Any) -> Callable[[Any, _Tables], Any] | None:
    """None when the value is stored as is (JSON-native, tuples included)."""
    if _is_plain(tp):
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(inner) == 1 and inner[0] in INTERNED:
            return _intern_conv(inner[0], optional=True)
        if len(inner) == 1:
            opt = _enc_conv(inner[0])
            if opt is None:
                return None
            return lambda v, t: None if v is None else opt(v, t)
        raise TypeError(f"the session codec stores no union of several non-plain types: {tp}")
    if origin is tuple:
        item = tuple_item(tp)
        if item in INTERNED:
            return _interned_tuple_conv(item)
        each = _enc_conv(item)
        if each is None:
            return None
        return lambda v, t: [each(x, t) for x in v]
    if origin is dict:
        conv = _enc_conv(typing.get_args(tp)[1])
        if conv is None:
            return None
        return lambda v, t: {k: conv(x, t) for k, x in v.items()}
    if isinstance(tp, type) and tp in INTERNED:
        return _intern_conv(tp, optional=False)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        enc = _encoder(tp)
        return enc
    raise TypeError(f"the session codec has no stored form for {tp!r}")


def _intern_conv(tp: type, *, optional: bool) -> Callable[[Any, _Tables], Any]:
    """A SourceLoc/TensorMeta field -> its table index; the identity lookup inlined (a node's
    source and outputs: ~60k values per deep model)."""

    def conv(v: Any, t: _Tables) -> Any:
        if v is None and optional:
            return None
        found = t._by_id.get(id(v))
        return found if found is not None else t.intern(tp, v)

    return conv


def _interned_tuple_conv(tp: type) -> Callable[[Any, _Tables], Any]:
    def conv(v: Any, t: _Tables) -> Any:
        if not v:
            return []
        by_id = t._by_id
        out = []
        for x in v:
            found = by_id.get(id(x))
            out.append(found if found is not None else t.intern(tp, x))
        return out

    return conv


def _is_plain(tp: Any) -> bool:
    """JSON-native without conversion: primitives, unions of them, tuples/dicts of plain values."""
    if tp in _PRIMITIVES or tp is Any or (isinstance(tp, type) and issubclass(tp, Enum)):
        return True  # an enum is written as its value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return all(_is_plain(a) for a in typing.get_args(tp))
    if origin is tuple:
        return all(_is_plain(a) for a in typing.get_args(tp) if a is not Ellipsis)
    if origin is dict:
        key, val = typing.get_args(tp)
        return key is str and _is_plain(val)
    return False


# -------------------------------------------------------------------------------------- decoding


_VERSION = msgspec.json.Decoder(msgspec.defstruct("Version", [("schema_version", object, None)]))
_FILE = stored_file(stored_struct(Session, ROW))
_DECODER = msgspec.json.Decoder(_FILE)


def stored_version(data: bytes | str) -> Any:
    """The file's `schema_version` (None where it has none), read before the rest is typed."""
    try:
        version: Any = _VERSION.decode(data)
        return version.schema_version
    except msgspec.ValidationError:  # not an object at all
        return None


def check(data: bytes | str) -> Any:
    """The file's checked structs; `BadValueError` unless every value fits its field. This is the
    typed parse of a load without making the model (its table indexes are the writer's own, so in
    range): a save runs it on what it is about to write, where a load's dataclasses would be a
    second copy of the session (7 ranks of a deep model: hundreds of MB) for a check that needs none."""
    try:
        return _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        raise bad_value(exc, _FILE, _plain_json(data)) from None


def unpack(data: bytes | str) -> Session:
    """The session in a file of this layout (the caller checked its version), every value checked
    against its field's type while it is parsed; `BadValueError` names the first that does not fit."""
    stored = check(data)
    maker = ModelMaker(ROW, stored.tables, links_from=decode_links)
    try:
        session: Session = maker.make(Session, stored.session)
    finally:
        maker.forget()
    return session


def _plain_json(data: bytes | str) -> Any:
    """The file as builtins, for naming a bad mapping entry by its key (on the error path only)."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None
