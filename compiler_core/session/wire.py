"""The stored forms of the session model, derived from the model's own type hints, and msgspec.

There is one description per type: its dataclass in `model.py`. From it this module derives,
once per class, the msgspec `Struct` a file's value must decode into, in two layouts:

- ``ROW``: a positional array in field order (`array_like`), the session file's layout
  (`packed.py`). A row may stop early, the missing fields taking their defaults (the writer drops
  trailing defaults), and may run long, the extra cells ignored (a newer build's fields), so
  fields are only ever appended (`tests/compiler_core/test_session_wire.py` holds the order).
  `SourceLoc` and `TensorMeta` are interned: a slot of those types holds an index into the file's
  tables (a deep model repeats a few hundred of them over 60k slots).
- ``OBJECT``: a JSON object keyed by field name, everything inline: the form trace-log artifacts
  of our own hooks carry (a recorded graph, an autotuning result, a timeline record).

msgspec parses and type-checks a value against these structs in C, with the path of the first bad
value; `ModelMaker` then makes the dataclasses from the checked structs. A value decoded here is
therefore always of its field's type: what reaches the GUI was never an unchecked value from a
file (a `"compile_id": 5` once reached pyqtgraph, which died with SIGSEGV). Ints are held to 64
bits, since Qt takes C ints. Nothing here executes data.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Sequence
from enum import Enum
from functools import cache
from typing import Annotated, Any, Literal

import msgspec

from compiler_core.session.model import Session, SourceLoc, TensorMeta

Layout = Literal["row", "object"]
ROW: Layout = "row"
OBJECT: Layout = "object"
INTERNED: tuple[type, ...] = (SourceLoc, TensorMeta)
INT64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
INDEX = Annotated[int, msgspec.Meta(ge=0, le=2**63 - 1)]
# The session's links on disk: each undirected link once, grouped by the two refs' prefixes
# (`[prefix_a, prefix_b, [key_a, key_b, ...]]`, packed.encode_links).
LINK_GROUPS = tuple[tuple[str, str, tuple[str, ...]], ...]
_PRIMITIVES: tuple[Any, ...] = (str, bool, type(None))


def stored_type(tp: Any, layout: Layout) -> Any:
    """The msgspec type a value of model type `tp` is stored as."""
    if tp in _PRIMITIVES or tp is Any:
        return tp
    if tp is int:
        return INT64
    if tp is float:
        return float  # msgspec takes a JSON int for a float field and makes it a float
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = tuple(stored_type(a, layout) for a in typing.get_args(tp))
        return typing.Union[args]  # noqa: UP007 - built from a runtime tuple of members
    if origin is tuple:
        return tuple[stored_type(tuple_item(tp), layout), ...]  # type: ignore[misc]
    if origin is dict:
        key, value = typing.get_args(tp)
        if key is not str:
            raise TypeError(f"only str-keyed mappings are stored: {tp}")
        return dict[str, stored_type(value, layout)]  # type: ignore[misc]
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if layout == ROW and tp in INTERNED:
            return INDEX
        return stored_struct(tp, layout)
    raise TypeError(f"the session codec has no stored form for {tp!r}")


@cache
def stored_struct(cls: type, layout: Layout) -> type[msgspec.Struct]:
    """The struct a `cls` value decodes into: its fields, in its order, with its defaults."""
    hints = typing.get_type_hints(cls)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for f in dataclasses.fields(cls):
        tp = LINK_GROUPS if (cls is Session and f.name == "links") else stored_type(hints[f.name], layout)
        if f.default_factory is not dataclasses.MISSING:
            fields.append((f.name, tp, msgspec.field(default_factory=f.default_factory)))
        elif dataclasses.is_dataclass(f.default) and tp is INDEX:  # an interned default: no row
            fields.append((f.name, INDEX | None, None))  # to point at, so absent reads as None
        elif dataclasses.is_dataclass(f.default):  # Session.meta: its struct, made when absent
            fields.append((f.name, tp, msgspec.field(default_factory=_struct_of(f.default, tp))))
        elif f.default is not dataclasses.MISSING:
            fields.append((f.name, tp, f.default))
        else:
            fields.append((f.name, tp))
    # gc=False: the structs live only while a file is decoded and hold no cycles
    return msgspec.defstruct(f"{cls.__name__}{layout.title()}", fields, array_like=layout == ROW,
                             gc=False)  # fmt: skip


def _many(item: Any) -> Any:
    return tuple[item, ...]


def _struct_of(default: Any, struct: Any) -> Callable[[], Any]:
    return lambda: msgspec.convert(default, struct, from_attributes=True)


def stored_file(layout_struct: type[msgspec.Struct]) -> type[msgspec.Struct]:
    """The envelope of a session file around the `Session` row: version, tables, session."""
    rows: list[Any] = [(c.__name__, _many(stored_struct(c, ROW)), ()) for c in INTERNED]
    tables = msgspec.defstruct("Tables", rows, gc=False)
    fields: list[Any] = [("schema_version", INT64), ("session", layout_struct),
              ("tables", tables, msgspec.field(default_factory=tables))]  # fmt: skip
    return msgspec.defstruct("SessionFile", fields, gc=False)


# ------------------------------------------------------------------------------ struct -> model


Conv = Callable[[Any], Any]


class ModelMaker:
    """Makes model dataclasses from checked structs; for the ROW layout, with one file's tables.

    `links_from` turns the stored link groups into the model's map (packed.decode_links)."""

    def __init__(self, layout: Layout, tables: Any = None, links_from: Conv | None = None) -> None:
        self.layout = layout
        self.links_from = links_from
        self._makers: dict[type, Conv] = {}
        self.tables: dict[type, Sequence[Any]] = {}
        if tables is not None:
            for cls in INTERNED:
                self.tables[cls] = tuple(map(self.maker(cls), getattr(tables, cls.__name__)))

    def make(self, cls: type, value: Any) -> Any:
        return self.maker(cls)(value)

    def forget(self) -> None:
        """Drop the converters made so far. They close over this maker, so a maker that keeps
        them is a reference cycle: left to the cyclic collector instead of freed when done."""
        self._makers.clear()

    def maker(self, cls: type) -> Conv:
        found = self._makers.get(cls)
        if found is None:
            found = self._makers[cls] = self._build(cls)
        return found

    def _build(self, cls: type) -> Conv:
        hints = typing.get_type_hints(cls)
        fields = dataclasses.fields(cls)
        convs: list[Conv | None] = []
        for f in fields:
            conv = self.converter(hints[f.name])
            if cls is Session and f.name == "links":
                conv = self.links_from
            elif self.layout == ROW and hints[f.name] in INTERNED and dataclasses.is_dataclass(f.default):
                conv = _absent_is(f.default, conv)
            convs.append(conv)
        at = [(i, c) for i, c in enumerate(convs) if c is not None]
        astuple = msgspec.structs.astuple
        if hasattr(cls, "__post_init__") or not hasattr(cls, "__dict__"):
            def build(values: Any) -> Any:
                return cls(*values)
        else:
            # The checked values go straight into the instance's dict, as pickle and copy make a
            # dataclass: a frozen dataclass's __init__ sets each field through object.__setattr__,
            # twice the cost over the 35k objects of a deep model's session.
            names = [f.name for f in fields]
            new = object.__new__

            def build(values: Any) -> Any:
                made: Any = new(cls)
                made.__dict__.update(zip(names, values, strict=True))
                return made

        if not at:
            return lambda s: build(astuple(s))

        def make(s: Any) -> Any:
            values = list(astuple(s))
            for i, c in at:
                values[i] = c(values[i])
            return build(values)

        return make

    def converter(self, tp: Any) -> Conv | None:
        """None where the checked value already is the model's (primitives, enums, plain
        tuples and maps); else the function that makes the model's value from it."""
        origin = typing.get_origin(tp)
        if origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            inner = self.converter(members[0]) if len(members) == 1 else None
            if inner is None:
                return None
            return lambda v: None if v is None else inner(v)
        if origin is tuple:
            item = self.converter(tuple_item(tp))
            if item is None:
                return None
            each: Conv = item
            return lambda v: tuple(map(each, v))
        if origin is dict:
            value = self.converter(typing.get_args(tp)[1])
            if value is None:
                return None
            of: Conv = value
            return lambda v: {k: of(x) for k, x in v.items()}
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            if self.layout == ROW and tp in INTERNED:
                return self._interned(tp)
            return self._lazy(tp)
        return None

    def _interned(self, tp: type) -> Conv:
        def lookup(i: int) -> Any:
            table = self.tables.get(tp, ())
            if i < len(table):
                return table[i]
            raise BadValueError(f"tables.{tp.__name__}", f"index {i} is past the table ({len(table)} rows)")

        return lookup

    def _lazy(self, cls: type) -> Conv:
        holder: list[Conv] = []

        def make(v: Any) -> Any:
            if not holder:
                holder.append(self.maker(cls))
            return holder[0](v)

        return make


class BadValueError(ValueError):
    """A stored value does not fit its field; `path` names it as a reader writes it
    (`compiles[0].compile_id`), `problem` says what is wrong (`expected str, got int`)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'value'}: {problem}")
        self.path = path
        self.problem = problem


def bad_value(exc: msgspec.ValidationError, stored: Any, data: Any = None) -> BadValueError:
    """msgspec's `Expected `str`, got `int` - at `$...`` in our words, its path by field name;
    with the value that was decoded (`data`), a mapping's entry is named by its key."""
    problem, _, at = str(exc).partition(" - at `")
    problem = problem.replace("`", "")
    return BadValueError(field_path(stored, at.rstrip("`"), data), problem[:1].lower() + problem[1:])


def _absent_is(default: Any, conv: Conv | None) -> Conv:
    """An interned field whose default no table row holds: absent (None) reads as the default."""
    def make(v: Any) -> Any:
        return default if v is None or conv is None else conv(v)

    return make


def checked(tp: Any, data: Any) -> Any:
    """A value of model type `tp` from one already parsed from JSON (a log artifact of our own
    hooks), type-checked as a session file is; `BadValueError` names the first value that does not fit."""
    stored = stored_type(tp, OBJECT)
    try:
        value = msgspec.convert(data, stored)
    except msgspec.ValidationError as exc:
        raise bad_value(exc, stored, data) from None
    make = _object_converter(tp)
    return value if make is None else make(value)


@cache
def _object_converter(tp: Any) -> Conv | None:
    """`tp`'s converter for the OBJECT layout, made once per type: making one reads the type
    hints of every dataclass it reaches (0.27 ms), and `checked` runs once per record of a live
    run (thousands a second). The maker lives as long as its converters, which close over it."""
    return ModelMaker(OBJECT).converter(tp)


def plain(value: Any) -> Any:
    """The OBJECT layout of a model value, as JSON-ready builtins (enums as their values)."""
    return msgspec.to_builtins(value)


# ------------------------------------------------------------------------------- error paths

_STEP = re.compile(r"\.(\w+)|\[(\d+)\]|\[\.\.\.\]")


_NO_DATA = object()


def field_path(stored: Any, at: str, data: Any = _NO_DATA) -> str:
    """msgspec's `$.session[2][0][0]` as a reader writes it: `compiles[0].compile_id`.

    Walks the stored types: a row's index is its field's name, an array's index stays an index.
    msgspec does not say which entry of a mapping was wrong: with the decoded `data` at hand (an
    error path only) the first entry that does not fit is named by its key, else `[…]`."""
    tp: Any = stored
    out: list[str] = []
    for m in _STEP.finditer(at.removeprefix("$")):
        name, index = m.group(1), m.group(2)
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            fields = msgspec.structs.fields(tp)
            if name is not None:
                pos, f = next(((i, x) for i, x in enumerate(fields) if x.name == name), (-1, None))
                step: Any = name
            else:
                pos = int(index) if index is not None else -1
                f = fields[pos] if 0 <= pos < len(fields) else None
                step = pos
            if f is None:
                break
            out.append(f".{f.name}")
            tp, data = f.type, _step(data, step)
        elif typing.get_origin(tp) is dict:
            value_tp = typing.get_args(tp)[1]
            key = _bad_key(data, value_tp)
            out.append("[…]" if key is _NO_DATA else f"[{key!r:.80}]")
            tp, data = value_tp, _step(data, key)
        else:
            args = typing.get_args(tp)
            out.append(f"[{index}]" if index is not None else "[…]")
            tp = args[0] if args else Any
            data = _step(data, int(index)) if index is not None else _NO_DATA
    path = "".join(out).lstrip(".")
    return path.removeprefix("session.").removeprefix("session")


def _step(data: Any, key: Any) -> Any:
    try:
        return data[key]
    except (KeyError, IndexError, TypeError):
        return _NO_DATA


def _bad_key(data: Any, value_tp: Any) -> Any:
    if not isinstance(data, dict):
        return _NO_DATA
    for key, value in data.items():
        try:
            msgspec.convert(value, value_tp)
        except (msgspec.ValidationError, RecursionError):
            return key
    return _NO_DATA


def _unwrap(tp: Any) -> Any:
    """The type inside an Annotated, and the one non-None member of an optional."""
    while True:
        if typing.get_origin(tp) is Annotated:
            tp = typing.get_args(tp)[0]
        elif typing.get_origin(tp) in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def tuple_item(tp: Any) -> Any:
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    raise TypeError(f"fixed-length tuple fields are not stored by the codec: {tp}")
