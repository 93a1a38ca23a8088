"""Schema 2 on-disk layout: positional rows, shared tables, links stored once. Plain JSON.

Why not schema 1's one-object-per-dataclass: a 32-layer Llama session spelled every field name and
every node's source location (a 90-character path plus the line's code) 30,000 times, and stored
each link in both directions: 125 MB for a 14 MB log, 8 s to write and 11 s to read.

Layout of the top-level object:

- ``schema_version``: 2 or 3 (the same layout; 3 adds `Compile.run` and `Session.source_origins`).
- ``fields``: for every dataclass, its field names in the order its rows use. Rows are lists in
  that order with trailing default values dropped. A reader maps stored names to its own fields, so
  a field added later (with a default) reads as its default from older files, and a field this
  build does not know is ignored: the same compatibility rule as schema 1.
- ``tables``: ``SourceLoc`` and ``TensorMeta`` rows, each stored once; a field of those types holds
  the row's index. A deep model repeats a few hundred of them over its nodes.
- ``session``: the `Session` row. Its ``links`` slot holds `encode_links`'s form, not a mapping.

Encoders and decoders are generated once per class from the type hints (no per-value
`is_dataclass` dispatch). Nothing here executes data: values become dataclass fields or raise.
"""

from __future__ import annotations

import bisect
import dataclasses
import operator
import types
import typing
from collections import defaultdict
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from compiler_core.session.model import SCHEMA_VERSION, Graph, Kernel, Session, SourceLoc, TensorMeta
from compiler_core.session.refs import split_prefix

PACKED_VERSIONS = (2, 3)  # schema versions written in this layout
INTERNED: tuple[type, ...] = (SourceLoc, TensorMeta)
_SHARED: tuple[type, ...] = (Graph, Kernel)  # encoded once per object (frozen, held by the session)
Conv = Callable[[Any], Any]
_PRIMITIVES = (str, int, float, bool, type(None))


class PackedFormatError(ValueError):
    """The packed payload does not fit the schema (a damaged or foreign file)."""


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
    adj: dict[str, list[str]] = defaultdict(list)
    if not isinstance(data, list):
        raise PackedFormatError("links must be a list of [prefix, prefix, keys] groups")
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
    classes = _reachable(Session)
    return {
        "schema_version": SCHEMA_VERSION,
        "fields": {cls.__name__: [f.name for f in dataclasses.fields(cls)] for cls in classes},
        "tables": tables.rows,
        "session": row,
    }


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
        return _generic_enc
    if origin is tuple:
        item = _tuple_item(tp)
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
    return _generic_enc


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


def _generic_enc(value: Any, tables: _Tables) -> Any:
    from compiler_core.session.codec import to_jsonable

    return to_jsonable(value)


def _is_plain(tp: Any) -> bool:
    """JSON-native without conversion: primitives, unions of them, tuples/dicts of plain values."""
    if tp in _PRIMITIVES or tp is Any:
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return all(_is_plain(a) for a in typing.get_args(tp))
    if origin is tuple:
        return all(_is_plain(a) for a in typing.get_args(tp) if a is not Ellipsis)
    if origin is dict:
        key, val = typing.get_args(tp)
        return key is str and _is_plain(val)
    return False


def _tuple_item(tp: Any) -> Any:
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    raise TypeError(f"fixed-length tuple fields are not supported by the codec: {tp}")


def _reachable(root: type) -> list[type]:
    seen: dict[type, None] = {}
    stack = [root]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen[cls] = None
        for tp in typing.get_type_hints(cls).values():
            stack.extend(_dataclasses_in(tp))
    return list(seen)


def _dataclasses_in(tp: Any) -> list[type]:
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return [tp]
    return [c for a in typing.get_args(tp) for c in _dataclasses_in(a)]


# -------------------------------------------------------------------------------------- decoding


class _Decoder:
    """Decoders for one file: its stored field order per class, and its tables."""

    def __init__(self, data: dict[str, Any]) -> None:
        fields = data.get("fields")
        if not isinstance(fields, dict):
            raise PackedFormatError("missing the 'fields' layout")
        self.stored: dict[str, list[str]] = fields
        self._decoders: dict[type, Callable[[Any], Any]] = {}
        raw_tables = data.get("tables") or {}
        self.tables: dict[type, list[Any]] = {}
        for cls in INTERNED:
            dec = self.decoder(cls)
            self.tables[cls] = [dec(r) for r in raw_tables.get(cls.__name__, [])]

    def decoder(self, cls: type) -> Callable[[Any], Any]:
        found = self._decoders.get(cls)
        if found is None:
            found = self._decoders[cls] = self._make(cls)
        return found

    def _make(self, cls: type) -> Callable[[Any], Any]:
        hints = typing.get_type_hints(cls)
        current = {f.name for f in dataclasses.fields(cls)}
        stored = self.stored.get(cls.__name__)
        if stored is None:
            stored = [f.name for f in dataclasses.fields(cls)]
        plan: list[tuple[int, str, Conv | None]] = []
        for i, name in enumerate(stored):
            if name in current:
                conv = self._dec_conv(hints[name])
                if cls is Session and name == "links":
                    conv = decode_links
                plan.append((i, name, conv))
        names = [f.name for f in dataclasses.fields(cls)]
        # Rows can be read by position when the file's order is ours, possibly shorter (an older
        # build) or longer (a newer one: zip drops the unknown tail).
        positional = stored == names[: len(stored)] or stored[: len(names)] == names
        convs = [c for _, _, c in plan]
        cls_name = cls.__name__

        def decode(row: Any) -> Any:
            if not isinstance(row, list):
                raise PackedFormatError(f"expected a row for {cls_name}, got {type(row).__name__}")
            if positional:
                return cls(*[v if c is None else c(v) for v, c in zip(row, convs, strict=False)])
            kwargs = {n: (row[i] if c is None else c(row[i])) for i, n, c in plan if i < len(row)}
            return cls(**kwargs)

        return decode

    def _dec_conv(self, tp: Any) -> Conv | None:
        origin = typing.get_origin(tp)
        if tp is float:
            return lambda v: float(v) if isinstance(v, int) else v
        if tp in _PRIMITIVES or tp is Any:
            return None
        if origin in (typing.Union, types.UnionType):
            inner = [a for a in typing.get_args(tp) if a is not type(None)]
            if all(a in _PRIMITIVES for a in inner):
                if float in inner and int not in inner:
                    return lambda v: float(v) if isinstance(v, int) else v
                return None
            if len(inner) == 1:
                opt = self._dec_conv(inner[0])
                if opt is None:
                    return None
                return lambda v: None if v is None else opt(v)
            from compiler_core.session.codec import from_jsonable

            return lambda v: from_jsonable(tp, v)
        if origin is tuple:
            each = self._dec_conv(_tuple_item(tp))
            if each is None:
                return tuple
            return lambda v: tuple([each(x) for x in v])
        if origin is dict:
            conv = self._dec_conv(typing.get_args(tp)[1])
            if conv is None:
                return dict
            return lambda v: {str(k): conv(x) for k, x in v.items()}
        if isinstance(tp, type) and tp in INTERNED:
            table = self.tables.get(tp)
            if table is None:  # decoding the table rows themselves
                return self.decoder(tp)
            return table.__getitem__
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self._lazy(tp)
        from compiler_core.session.codec import from_jsonable

        return lambda v: from_jsonable(tp, v)

    def _lazy(self, cls: type) -> Conv:
        """Resolve a nested class's decoder at first use (the class graph has cycles in principle)."""
        holder: list[Conv] = []

        def decode(v: Any) -> Any:
            if not holder:
                holder.append(self.decoder(cls))
            return holder[0](v)

        return decode


def unpack(data: dict[str, Any]) -> Session:
    try:
        decoder = _Decoder(data)
        session: Session = decoder.decoder(Session)(data["session"])
    except PackedFormatError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise PackedFormatError(f"damaged session payload: {type(exc).__name__}: {exc}") from exc
    return session
