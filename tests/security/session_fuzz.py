"""Hypothesis strategies for hostile session files, derived from the session schema.

`mutations(base)` draws a mutated copy of a real session's JSON. Every node of the base document
is indexed with the schema type it must have (walked from `Session`'s type hints, as the validator
walks them), and a mutation picks one and:

- replaces it with a value of the *wrong* type (type confusion: an int where a str goes, an
  object where a list goes, ...),
- replaces it with a *well-typed* but hostile value (huge or markup-laden strings, 64-bit edge
  ints, NaN and infinities, empty or long lists, unknown or missing dataclass fields),
- deletes it (a dataclass field or a list item), or
- buries it in deep nesting.

Several mutations can stack. `check_one(data, show)` is the property: loading either raises the
codec's clear error or gives a session that `show` (the real window) displays without an
exception. The CI test runs it on a few examples, `bench/fuzz_sessions.py` on many.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import itertools
import json
import sys
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st

from compiler_core.session import Ref, RefKind, Session, SessionFormatError, loads
from compiler_core.session.links import decode_or_none

Path = tuple[str | int, ...]
MARKUP = '<img src="/dev/zero"><a href=file:///etc/passwd>x</a><h1>big</h1>'
INT64 = 2**63 - 1


def typed_paths(
    tp: Any, data: Any, path: Path = (), keyed: bool = False
) -> Iterator[tuple[Path, Any, bool]]:
    """Every (path, expected type, is a mapping entry) in `data`, following `tp` (a model type)."""
    yield path, tp, keyed
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is not None and members:
            inner = next((m for m in members if dataclasses.is_dataclass(m)), members[0])
            yield from list(typed_paths(inner, data, path, keyed))[1:]
        return
    if dataclasses.is_dataclass(tp) and isinstance(tp, type) and isinstance(data, dict):
        hints = typing.get_type_hints(tp)
        for f in dataclasses.fields(tp):
            if f.name in data:
                yield from typed_paths(hints[f.name], data[f.name], (*path, f.name))
    elif origin is tuple and isinstance(data, list):
        item = typing.get_args(tp)[0]
        for i, v in enumerate(data):
            yield from typed_paths(item, v, (*path, i))
    elif origin is dict and isinstance(data, dict):
        value_tp = typing.get_args(tp)[1]
        for k, v in data.items():
            yield from typed_paths(value_tp, v, (*path, k), True)


def _text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40),
        st.just(MARKUP),
        st.builds(lambda n: "x" * n, st.sampled_from([0, 10_000, 1_000_000])),
        st.sampled_from(["", "\x00", "../../etc/passwd", "\n" * 1000, "0/0", "-", "🙂" * 100]),
    )


def _ints() -> st.SearchStrategy[int]:
    edges = [-1, 0, 2**31, -(2**31) - 1, INT64, -INT64 - 1]
    return st.one_of(st.integers(-5, 100_000), st.sampled_from(edges))


def _floats() -> st.SearchStrategy[float]:
    edges = [0.0, -0.0, 1e308, -1e-308]
    return st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(edges))


def well_typed(tp: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON of type `tp` (hostile but valid): what the validator must let through."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([well_typed(a, depth) for a in typing.get_args(tp)])
    if tp is type(None):
        return st.none()
    if tp is str:
        return _text()
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _ints()
    if tp is float:
        return st.one_of(_floats(), _ints())
    if depth > 3:
        return st.nothing()
    if origin is tuple:
        return st.lists(well_typed(typing.get_args(tp)[0], depth + 1), max_size=4)
    if origin is dict:
        return st.dictionaries(_text(), well_typed(typing.get_args(tp)[1], depth + 1), max_size=3)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp)
        fields = dataclasses.fields(tp)
        required = {f.name: well_typed(hints[f.name], depth + 1) for f in fields
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        optional = {f.name: well_typed(hints[f.name], depth + 1) for f in fields if f.name not in required}
        return st.fixed_dictionaries(required, optional=optional)
    return st.none()


def _json_kinds() -> dict[str, st.SearchStrategy[Any]]:
    return {
        "str": _text(), "int": _ints(), "float": _floats(), "bool": st.booleans(), "null": st.none(),
        "array": st.lists(st.one_of(_ints(), _text()), max_size=3),
        "object": st.dictionaries(st.text(max_size=8), st.one_of(_ints(), _text()), max_size=3),
    }


def _kind_of(tp: Any) -> set[str]:
    """The JSON kinds `tp` accepts (so a confusing value is drawn from the others)."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_kind_of(a) for a in typing.get_args(tp)))
    if tp is type(None):
        return {"null"}
    if tp is str:
        return {"str"}
    if tp is bool:
        return {"bool"}
    if tp is int:
        return {"int"}
    if tp is float:
        return {"float", "int"}
    if origin is tuple:
        return {"array"}
    return {"object"}


def wrong_typed(tp: Any) -> st.SearchStrategy[Any]:
    kinds = _json_kinds()
    return st.one_of([s for k, s in kinds.items() if k not in _kind_of(tp)])


def deep(depth: int) -> Any:
    value: Any = 1
    for i in range(depth):
        value = [value] if i % 2 else {"a": value}
    return value


def _set(doc: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


def _rekey(doc: Any, path: Path, key: str) -> Any:
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[key] = parent.pop(path[-1])
    return doc


def _delete(doc: Any, path: Path) -> Any:
    if not path:
        return doc
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return doc


@st.composite
def mutations(draw: Callable[..., Any], base: dict[str, Any], max_steps: int = 3) -> dict[str, Any]:
    """A mutated deep copy of `base` (a session's JSON): 1..max_steps schema-aware mutations."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_steps))):
        paths = [t for t in typed_paths(Session, doc) if t[0]]  # re-indexed: earlier steps moved things
        path, tp, keyed = paths[draw(st.integers(0, len(paths) - 1))]
        how = draw(st.sampled_from(["wrong", "wrong", "hostile", "hostile", "delete", "deep", "rekey"]))
        if how == "rekey" and keyed:  # a mapping's key: a ref, a path, a line number, a node name
            doc = _rekey(doc, path, draw(_text()))
        elif how in ("wrong", "rekey"):
            doc = _set(doc, path, draw(wrong_typed(tp)))
        elif how == "hostile":
            doc = _set(doc, path, draw(well_typed(tp)))
        elif how == "delete":
            doc = _delete(doc, path)
        else:
            doc = _set(doc, path, deep(draw(st.sampled_from([50, 5_000, 100_000]))))
    return doc


def encode(doc: Any) -> str:
    """JSON text of `doc`; NaN and infinities as Python's json writes them (the codec reads them)."""
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

