"""Hypothesis strategies for hostile session files, derived from the stored types the codec reads.

`mutations(base)` draws a mutated copy of a real session file's JSON. Every node of the base
document is indexed with the stored type it must have, walked from the msgspec struct of the whole
file (`packed._FILE`, derived from the model's dataclasses), so the fuzzer follows the codec's own
description of the file: a row is a list indexed by field position, an interned `SourceLoc` or
`TensorMeta` is an index into the tables, ints carry their bounds. A mutation picks one node and:

- replaces it with a value of the *wrong* type (type confusion: an int where a str goes, an
  object where a row goes, an int past its bounds, a word outside an enum, NaN, ...),
- replaces it with a *well-typed* but hostile value (huge or markup-laden strings, ints at their
  bounds, extreme floats, empty or long lists, rows cut to their required fields or carrying
  extra cells, table indexes past the table),
- deletes it (a list item, a mapping entry or object field, or a row's tail, which may take a
  required field with it), or
- buries it in deep nesting.

Several mutations can stack. `check_one(data, show)` is the property: loading either raises the
codec's clear error or gives a session that `show` (the real window) displays without an
exception. The CI test runs it on a few examples, `bench/fuzz_sessions.py` on many.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import sys
import types
import typing
from collections.abc import Callable, Iterator
from enum import Enum
from typing import Annotated, Any

import msgspec
from hypothesis import strategies as st

from compiler_core.session import Ref, RefKind, Session, SessionFormatError, loads
from compiler_core.session.links import decode_or_none
from compiler_core.session.packed import _FILE

Path = tuple[str | int, ...]
FILE: Any = _FILE  # the stored type of a whole session file: what the codec decodes a file into
MARKUP = '<img src="/dev/zero"><a href=file:///etc/passwd>x</a><h1>big</h1>'
INT64 = 2**63 - 1


def _bounds(tp: Any) -> tuple[Any, int | None, int | None]:
    """The type inside an Annotated, with its msgspec.Meta bounds on ints (inclusive; None:
    unbounded)."""
    lo: int | None = None
    hi: int | None = None
    while typing.get_origin(tp) is Annotated:
        tp, *metas = typing.get_args(tp)
        for m in metas:
            if isinstance(m, msgspec.Meta):
                lo = int(m.ge) if m.ge is not None else (int(m.gt) + 1 if m.gt is not None else lo)
                hi = int(m.le) if m.le is not None else (int(m.lt) - 1 if m.lt is not None else hi)
    return tp, lo, hi


def _bare(tp: Any) -> Any:
    return _bounds(tp)[0]


def _is_struct(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, msgspec.Struct)


def is_row(tp: Any) -> bool:
    """A struct stored as a positional row (a JSON array in field order)."""
    return _is_struct(tp) and bool(tp.__struct_config__.array_like)


def _members(tp: Any) -> list[Any]:
    """The members of a union, each with its bounds (`[tp]` when it is not a union)."""
    bare = _bare(tp)
    if typing.get_origin(bare) in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(bare) for m in _members(a)]
    return [tp]


def _tuple_items(tp: Any, n: int) -> list[Any]:
    """The item types of the first `n` items of a list stored for tuple type `tp`."""
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        return [args[0]] * n
    return list(args[:n])


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    return {float: "float", str: "str", list: "array", dict: "object"}.get(type(value), "other")


def typed_paths(
    tp: Any, data: Any, path: Path = (), keyed: bool = False
) -> Iterator[tuple[Path, Any, bool]]:
    """Every (path, stored type, is a mapping entry) in `data`, following `tp` (a stored type:
    `FILE` for a whole file). A row's cells are reached by position, an object's by field name;
    cells past a short row (defaults the writer dropped) and unknown keys are not walked."""
    yield path, tp, keyed
    members = [m for m in _members(tp) if _json_kind(data) in _kind_of(m)]
    if not members:  # a value that does not fit (an earlier mutation): nothing inside to type
        return
    inner = _bare(members[0])
    if is_row(inner) and isinstance(data, list):
        for i, f in enumerate(msgspec.structs.fields(inner)[: len(data)]):
            yield from typed_paths(f.type, data[i], (*path, i))
    elif _is_struct(inner) and isinstance(data, dict):
        for f in msgspec.structs.fields(inner):
            if f.encode_name in data:
                yield from typed_paths(f.type, data[f.encode_name], (*path, f.encode_name))
    elif typing.get_origin(inner) is tuple and isinstance(data, list):
        for i, (item, v) in enumerate(zip(_tuple_items(inner, len(data)), data, strict=False)):
            yield from typed_paths(item, v, (*path, i))
    elif typing.get_origin(inner) is dict and isinstance(data, dict):
        value_tp = typing.get_args(inner)[1]
        for k, v in data.items():
            yield from typed_paths(value_tp, v, (*path, k), True)


def _text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40),
        st.just(MARKUP),
        st.builds(lambda n: "x" * n, st.sampled_from([0, 10_000, 1_000_000])),
        st.sampled_from(["", "\x00", "../../etc/passwd", "\n" * 1000, "0/0", "-", "🙂" * 100]),
    )


def _ints(lo: int | None = None, hi: int | None = None) -> st.SearchStrategy[int]:
    """Ints within [lo, hi]: mostly small (table indexes that exist), sometimes at the bounds."""
    lo_, hi_ = -(INT64 + 1) if lo is None else lo, INT64 if hi is None else hi
    edges = [e for e in (lo_, hi_, lo_ + 1, hi_ - 1, -1, 0, 1, 2**31, -(2**31) - 1) if lo_ <= e <= hi_]
    small = st.integers(max(lo_, -5), min(hi_, max(lo_, -5) + 8))
    return st.one_of(small, st.integers(max(lo_, -5), min(hi_, 100_000)), st.sampled_from(edges))


def _out_of_bounds(lo: int | None, hi: int | None) -> st.SearchStrategy[int]:
    """Ints just past `tp`'s bounds, and ones past 64 bits, which Qt's C ints would not hold."""
    outside = [2**64, -(2**64)]
    outside += [lo - 1, lo - 2**40] if lo is not None else []
    outside += [hi + 1] if hi is not None else []
    return st.sampled_from(outside)


def _floats(finite: bool = False) -> st.SearchStrategy[float]:
    """Floats at their edges; NaN and the infinities only where not `finite` (they are not JSON:
    the codec refuses the whole file, so a well-typed value never holds them)."""
    edges = [0.0, -0.0, 1e308, -1e-308, 5e-324]
    return st.one_of(st.floats(allow_nan=not finite, allow_infinity=not finite), st.sampled_from(edges))


def _fields(struct: Any) -> tuple[Any, ...]:
    return tuple(msgspec.structs.fields(struct))


def minimal(tp: Any) -> Any:
    """The smallest JSON value of stored type `tp` (rows with their required fields only)."""
    bare, lo, _hi = _bounds(tp)
    members = _members(tp)
    if len(members) > 1:
        return None if type(None) in members else minimal(members[0])
    origin = typing.get_origin(bare)
    if bare is type(None):
        return None
    if bare is str:
        return ""
    if bare is bool:
        return False
    if bare is int:
        return max(lo or 0, 0)
    if bare is float:
        return 0.0
    if isinstance(bare, type) and issubclass(bare, Enum):
        return next(iter(bare)).value
    if origin is tuple:
        args = typing.get_args(bare)
        return [] if Ellipsis in args else [minimal(a) for a in args]
    if origin is dict:
        return {}
    if is_row(bare):
        fields = _fields(bare)
        last = max((i + 1 for i, f in enumerate(fields) if f.required), default=0)
        return [minimal(f.type) for f in fields[:last]]
    if _is_struct(bare):
        return {f.encode_name: minimal(f.type) for f in _fields(bare) if f.required}
    return None


@st.composite
def _row(draw: Callable[..., Any], struct: Any, depth: int) -> list[Any]:
    """A row of `struct`: its required fields, then a drawn number of the others in field order
    (a writer drops trailing defaults), sometimes with extra cells (a newer build's fields)."""
    fields = _fields(struct)
    required = max((i + 1 for i, f in enumerate(fields) if f.required), default=0)
    n = draw(st.integers(required, len(fields)))
    row = [draw(well_typed(f.type, depth + 1)) for f in fields[:n]]
    if n == len(fields) and draw(st.booleans()):
        row += draw(st.lists(st.one_of(_ints(), _text(), st.none()), min_size=1, max_size=3))
    return row


def well_typed(tp: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON of stored type `tp` (hostile but valid): what the codec's type check must let
    through (a table index may still point past the table: that is the codec's to refuse)."""
    bare, lo, hi = _bounds(tp)
    members = _members(tp)
    if len(members) > 1:
        return st.one_of([well_typed(m, depth) for m in members])
    origin = typing.get_origin(bare)
    if bare is type(None):
        return st.none()
    if bare is str:
        return _text()
    if bare is bool:
        return st.booleans()
    if bare is int:
        return _ints(lo, hi)
    if bare is float:
        return st.one_of(_floats(finite=True), _ints())
    if isinstance(bare, type) and issubclass(bare, Enum):
        return st.sampled_from([m.value for m in bare])
    if depth > 3:  # deep enough: containers empty, rows with their required fields only
        return st.just(minimal(bare))
    if origin is tuple:
        args = typing.get_args(bare)
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(well_typed(args[0], depth + 1), max_size=4)
        return st.tuples(*(well_typed(a, depth + 1) for a in args)).map(list)
    if origin is dict:
        return st.dictionaries(_text(), well_typed(typing.get_args(bare)[1], depth + 1), max_size=3)
    if is_row(bare):
        return _row(bare, depth)
    if _is_struct(bare):
        fields = _fields(bare)
        required = {f.encode_name: well_typed(f.type, depth + 1) for f in fields if f.required}
        optional = {f.encode_name: well_typed(f.type, depth + 1) for f in fields if not f.required}
        optional["unknown field"] = _text()  # ignored, as a newer build's field is
        return st.fixed_dictionaries(required, optional=optional)
    return st.none()


def _json_kinds() -> dict[str, st.SearchStrategy[Any]]:
    return {
        "str": _text(), "int": _ints(), "float": _floats(), "bool": st.booleans(), "null": st.none(),
        "array": st.lists(st.one_of(_ints(), _text()), max_size=3),
        "object": st.dictionaries(st.text(max_size=8), st.one_of(_ints(), _text()), max_size=3),
    }


def _kind_of(tp: Any) -> set[str]:
    """The JSON kinds stored type `tp` accepts (so a confusing value is drawn from the others)."""
    members = _members(tp)
    if len(members) > 1:
        return set().union(*(_kind_of(m) for m in members))
    bare = _bare(members[0])
    origin = typing.get_origin(bare)
    if bare is Any:
        return set(_json_kinds())
    if bare is type(None):
        return {"null"}
    if bare is str or (isinstance(bare, type) and issubclass(bare, Enum)):
        return {"str"}
    if bare is bool:
        return {"bool"}
    if bare is int:
        return {"int"}
    if bare is float:
        return {"float", "int"}
    if origin is tuple or is_row(bare):
        return {"array"}
    return {"object"}


def wrong_typed(tp: Any) -> st.SearchStrategy[Any]:
    """JSON that stored type `tp` refuses: another JSON kind, an int past its bounds, a word
    outside its enum."""
    kinds = _json_kinds()
    wrong = [s for k, s in kinds.items() if k not in _kind_of(tp)]
    members = _members(tp)
    if len(members) == 1:
        bare, lo, hi = _bounds(tp)
        if bare is int:
            wrong.append(_out_of_bounds(lo, hi))
        elif isinstance(bare, type) and issubclass(bare, Enum):
            wrong.append(st.sampled_from(["fine", "", bare.__name__, next(iter(bare)).value.upper()]))
    return st.one_of(wrong) if wrong else st.nothing()


def deep(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def _parent(doc: Any, path: Path) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


def _set(doc: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    _parent(doc, path)[path[-1]] = value
    return doc


def _rekey(doc: Any, path: Path, key: str) -> Any:
    parent = _parent(doc, path)
    parent[key] = parent.pop(path[-1])
    return doc


def _delete(doc: Any, path: Path, in_row: bool) -> Any:
    """Delete the item or entry at `path`; in a row, the cell and every one after it (a row is
    positional: its tail is what a writer drops, and what it drops may be a required field)."""
    if not path:
        return doc
    parent = _parent(doc, path)
    if in_row:
        del parent[path[-1]:]
    else:
        del parent[path[-1]]
    return doc


@st.composite
def mutations(draw: Callable[..., Any], base: dict[str, Any], max_steps: int = 3) -> dict[str, Any]:
    """A mutated deep copy of `base` (a session file's JSON): 1..max_steps type-aware mutations."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_steps))):
        typed = list(typed_paths(FILE, doc))  # re-indexed: earlier steps moved things
        type_at = {p: tp for p, tp, _ in typed}
        paths = [t for t in typed if t[0]]
        # Drawn as bytes: Hypothesis favours some ints (its bounds, the literals of the code under
        # test), which would pile the mutations onto a few nodes of the file.
        pick = int.from_bytes(draw(st.binary(min_size=4, max_size=4)), "big")
        path, tp, keyed = paths[pick % len(paths)]
        how = draw(st.sampled_from(["wrong", "wrong", "hostile", "hostile", "delete", "deep", "rekey"]))
        if how == "rekey" and keyed:  # a mapping's key: a ref, a path, a line number, a node name
            doc = _rekey(doc, path, draw(_text()))
        elif how in ("wrong", "rekey"):
            doc = _set(doc, path, draw(wrong_typed(tp)))
        elif how == "hostile":
            doc = _set(doc, path, draw(well_typed(tp)))
        elif how == "delete":
            in_row = any(is_row(m) for m in _members(type_at[path[:-1]]))
            doc = _delete(doc, path, in_row and isinstance(_parent(doc, path), list))
        else:
            doc = _set(doc, path, deep(draw(st.sampled_from([50, 5_000, 100_000]))))
    return doc


def encode(doc: Any) -> str:
    """JSON text of `doc`; NaN and infinities as Python's json writes them (not JSON: refused)."""
    try:
        return json.dumps(doc, allow_nan=True)
    except RecursionError:  # a deep value is written by hand, as a hostile file would hold it
        return _encode_deep(doc)


def _encode_deep(doc: Any) -> str:
    parts: list[str] = []
    stack: list[Any] = [doc]
    while stack:
        v = stack.pop()
        if isinstance(v, str) and v.startswith("\x00raw:"):
            parts.append(v[5:])
        elif isinstance(v, dict):
            stack.append("\x00raw:}")
            items = list(v.items())
            for i, (k, x) in reversed(list(enumerate(items))):
                stack.append(x)
                stack.append("\x00raw:" + ("," if i else "") + json.dumps(k) + ":")
            stack.append("\x00raw:{")
        elif isinstance(v, list):
            stack.append("\x00raw:]")
            for i, x in reversed(list(enumerate(v))):
                stack.append(x)
                if i:
                    stack.append("\x00raw:,")
            stack.append("\x00raw:[")
        else:
            parts.append(json.dumps(v, allow_nan=True))
    return "".join(parts)


class ShownWithError(AssertionError):
    """The window raised while showing an accepted session (in a slot: Qt would only print it)."""


@contextlib.contextmanager
def slot_errors() -> Iterator[list[BaseException]]:
    """Collect exceptions that reach sys.excepthook (PySide routes slot exceptions there)."""
    seen: list[BaseException] = []
    old = sys.excepthook
    sys.excepthook = lambda tp, exc, tb: seen.append(exc)
    try:
        yield seen
    finally:
        sys.excepthook = old


def show_in(window: Any, app: Any) -> Callable[[Session], None]:
    """`show` for `check_one`: the real MainWindow takes the session; any slot error fails."""
    def show(session: Session) -> None:
        with slot_errors() as seen:
            window.set_session(session, "fuzzed.json")
            app.processEvents()
            for ref in _some_refs(session):  # clicking through exercises the highlight paths
                window.selection.select({ref})
                app.processEvents()
        if seen:
            raise ShownWithError(f"{type(seen[0]).__name__}: {str(seen[0])[:300]}") from seen[0]
    return show


def _some_refs(session: Session, per_kind: int = 2) -> list[Ref]:
    """A few refs of each kind the session's links name (what a user's clicks would select)."""
    taken: dict[RefKind, int] = {}
    out = []
    for encoded in itertools.islice(session.links, 2000):
        ref = decode_or_none(encoded)
        if ref is not None and taken.get(ref.kind, 0) < per_kind:
            taken[ref.kind] = taken.get(ref.kind, 0) + 1
            out.append(ref)
    return out


def check_one(text: str, show: Callable[[Session], None]) -> str:
    """Load `text`; a clear error or a shown session. Returns "refused" or "shown"; anything
    else propagates (a crash)."""
    try:
        session = loads(text)
    except SessionFormatError as exc:
        message = str(exc)
        assert message and len(message) < 5_000, message[:200]
        return "refused"
    show(session)
    return "shown"

