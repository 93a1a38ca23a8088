"""The stored layout's contract: rows are positional, so a class's fields are only ever appended.

`data/session_fields.json` records every stored class's fields in order. A field added at the end
is fine (older files lack it and read its default; append it to the record); a field removed,
renamed or moved would make every saved session read the wrong cells, and fails here first.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from compiler_core.session.model import Graph, Node, Session, SourceLoc, TensorMeta
from compiler_core.session.wire import INTERNED, OBJECT, ROW, checked, plain, stored_struct

RECORD = Path(__file__).parent / "data" / "session_fields.json"


def _stored_classes() -> dict[str, type]:
    found: dict[str, type] = {}
    stack: list[Any] = [Session]
    while stack:
        tp = stack.pop()
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            if tp.__name__ not in found:
                found[tp.__name__] = tp
                stack.extend(typing.get_type_hints(tp).values())
        else:
            stack.extend(typing.get_args(tp))
    return found


def test_fields_are_only_appended() -> None:
    recorded: dict[str, list[str]] = json.loads(RECORD.read_text())
    classes = _stored_classes()
    assert set(recorded) <= set(classes), f"a stored class went away: {set(recorded) - set(classes)}"
    for name, cls in classes.items():
        now = [f.name for f in dataclasses.fields(cls)]
        before = recorded.get(name, [])
        assert now[: len(before)] == before, f"{name}: fields {before} must stay first, in order; got {now}"
        assert now == before, f"{name} gained {now[len(before):]}: append them to {RECORD.name}"


def test_rows_and_objects_come_from_the_same_fields() -> None:
    for cls in _stored_classes().values():
        names = [f.name for f in dataclasses.fields(cls)]
        for layout in (ROW, OBJECT):
            assert list(stored_struct(cls, layout).__struct_fields__) == names
    assert stored_struct(Node, ROW).__struct_config__.array_like
    assert not stored_struct(Node, OBJECT).__struct_config__.array_like


def test_interned_slots_are_indexes_in_rows_and_inline_in_objects() -> None:
    row_field = dict(zip(stored_struct(Node, ROW).__struct_fields__, msgspec.inspect.type_info(
        stored_struct(Node, ROW)).fields, strict=True))["source"]  # fmt: skip
    assert any(isinstance(t, msgspec.inspect.IntType) and t.ge == 0 for t in row_field.type.types)
    assert set(INTERNED) == {SourceLoc, TensorMeta}


def test_the_object_layout_round_trips_a_graph() -> None:
    loc = SourceLoc("m.py", 3, "f", "y = x + 1")
    add = Node("add", "call_function", "add", ("x",), (TensorMeta((2, "s0"), "f32"),), loc)
    graph = Graph("dynamo", (Node("x", "placeholder"), add))
    data = json.loads(json.dumps(plain(graph)))
    assert checked(Graph, data) == graph


@pytest.mark.parametrize("bad", [2**63, -(2**63) - 1])
def test_ints_are_held_to_64_bits(bad: int) -> None:
    with pytest.raises(ValueError, match="nodes"):
        checked(Graph, {"kind": "dynamo", "nodes": [{"name": "x", "op": "placeholder",
                                                      "outputs": [{"shape": [bad]}]}]})
