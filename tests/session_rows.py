"""Reach a value of an encoded session file by the path a reader writes (`compiles[0].compile_id`).

Session files store rows by position and intern `SourceLoc`/`TensorMeta` in tables
(compiler_core/session/packed.py); tests that plant a bad value address it the way the codec's
messages name it, so the field order is read from the model, never spelled in a test.
"""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from pathlib import Path
from typing import Any

from compiler_core.session.model import Session
from compiler_core.session.wire import INTERNED

_STEP = re.compile(r"\.?(\w+)|\[(\d+)\]")


def _unwrap(tp: Any) -> Any:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return tp


def _stored_default(f: dataclasses.Field[Any]) -> Any:
    """The cell a writer would have put for a field left at its default (rows drop those)."""
    value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
    return list(value) if isinstance(value, tuple) else value


def field_index(cls: type, name: str) -> int:
    return [f.name for f in dataclasses.fields(cls)].index(name)


def locate(doc: dict[str, Any], path: str) -> tuple[Any, Any, Any]:
    """(container, key, model type) of the value at `path`; a row too short for the field is padded
    with the defaults it dropped, and a step into an interned value goes to its table row."""
    container: Any = doc
    key: Any = "session"
    tp: Any = Session
    for m in _STEP.finditer(path):
        name, index = m.group(1), m.group(2)
        value = container[key]
        tp = _unwrap(tp)
        if tp in INTERNED and isinstance(value, int):
            container, key = doc["tables"][tp.__name__], value
            value = container[key]
        if name is not None:
            i = field_index(tp, name)
            while len(value) <= i:
                value.append(_stored_default(dataclasses.fields(tp)[len(value)]))
            container, key, tp = value, i, typing.get_type_hints(tp)[name]
        else:
            args = typing.get_args(tp)
            container, key, tp = value, int(index), args[0] if args else Any
    return container, key, tp


RECORDED_FIELDS = Path(__file__).parent / "compiler_core" / "data" / "session_fields.json"


def as_packed_of(version: int, data: dict[str, Any]) -> dict[str, Any]:
    """Today's encoded file as schema 2 or 3 wrote it: the same rows under a `fields` header."""
    return {**data, "schema_version": version, "fields": json.loads(RECORDED_FIELDS.read_text())}


def set_at(doc: dict[str, Any], path: str, value: Any) -> None:
    container, key, _ = locate(doc, path)
    container[key] = value


def get_at(doc: dict[str, Any], path: str) -> Any:
    container, key, _ = locate(doc, path)
    return container[key]
