"""A session of the wrong shape is refused on load with the field's path.

The check is derived from the model's type hints (compiler_core/session/wire.py), so these tests
mutate real session files (never hand-written dicts) and check the one message a user would see.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import pytest

from compiler_core.session import SCHEMA_VERSION, SessionFormatError, dumps, load, loads
from compiler_core.session.codec import SessionValidationError
from compiler_core.session.model import Compile, Dim, Kernel, TensorMeta
from compiler_core.session.wire import BadValueError, checked
from tests.conftest import FIXTURES
from tests.session_rows import get_at, set_at

REAL = FIXTURES / "transformer_block.json"
NODE = "compiles[0].dynamo_graph.nodes[3]"


def _real() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REAL.read_text())
    return data


def _put(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: set_at(d, path, value)


def _shape_of_output(d: dict[str, Any]) -> None:
    get_at(d, f"{NODE}.outputs[0].shape")[0] = 1.5


CASES: list[tuple[Callable[[dict[str, Any]], object], str]] = [
    (_put("compiles[0].compile_id", 5), "compiles[0].compile_id: expected str, got int"),
    # an interned TensorMeta is checked in its table, the place in the file that holds it
    (_shape_of_output, "tables.TensorMeta["),
    (lambda d: get_at(d, "compiles[0].inductor[0].kernels").__setitem__(1, ["k"]),
     "compiles[0].inductor[0].kernels[1]: expected array of at least length 2, got 1"),
    (_put("links", [["a|", "b|", [1, "x"]]]), "links[0][2][0]: expected str, got int"),
    (_put("meta.ranks", [True]), "meta.ranks[0]: expected int, got bool"),
    (_put("compiles[0].rank", 10**30), "compiles[0].rank: expected int <= 9223372036854775807"),
    (_put("sources", {"a.py": None}), "sources['a.py']: expected str, got null"),
    (_put("compiles", {"0": {}}), "compiles: expected array, got object"),
    (_put("compiles[0]", "x"), "compiles[0]: expected array, got str"),
    (_put("compiles[0].metrics.stage_s", {"aot": "1"}),
     "compiles[0].metrics.stage_s['aot']: expected float, got str"),
    (_put("meta.dynamic", 1), "meta.dynamic: expected bool | null, got int"),
    (_put(f"{NODE}.attrs", []), f"{NODE}.attrs: expected object, got array"),
    # closed vocabularies (session/vocab.py): a word outside one is refused, not carried into refs
    (_put("compiles[0].inductor[0].graph", "forward:x"),
     "compiles[0].inductor[0].graph: invalid enum value 'forward:x'"),
    (_put("compiles[0].status", "fine"), "compiles[0].status: invalid enum value 'fine'"),
    (_put("compiles[0].dynamo_graph.kind", "torch"),
     "compiles[0].dynamo_graph.kind: invalid enum value 'torch'"),
]


@pytest.mark.parametrize(("mutate", "message"), CASES)
def test_a_wrong_type_is_refused_with_its_field_path(
    mutate: Callable[[dict[str, Any]], object], message: str
) -> None:
    data = _real()
    mutate(data)
    with pytest.raises(SessionValidationError) as info:
        loads(json.dumps(data))
    assert str(info.value).startswith(message), str(info.value)
    assert isinstance(info.value, SessionFormatError)  # callers that catch format errors catch these


def test_real_sessions_and_unknown_fields_pass() -> None:
    for path in [*FIXTURES.glob("*.json"), *FIXTURES.glob("timeline/*.json")]:
        load(path)
    data = _real()
    last = dataclasses.fields(Compile)[-1].name
    get_at(data, f"compiles[0].{last}")  # the row padded to its last field
    get_at(data, "compiles")[0].append({"a_field_from_the_future": [1, 2]})  # a cell past it
    data["float_ok"] = 1
    set_at(data, "compiles[0].metrics.total_s", 3)  # an int where a float is expected is a number
    assert loads(json.dumps(data)).compiles[0].metrics.total_s == 3.0


def test_deep_nesting_is_a_format_error_not_a_crash() -> None:
    nested = "[" * 200_000 + "]" * 200_000
    deep = f'{{"schema_version": {SCHEMA_VERSION}, "session": [{{}}, {{}}, {nested}]}}'
    with pytest.raises(SessionFormatError):
        loads(deep)


def test_fragments_check_by_type() -> None:
    assert checked(Kernel, {"name": "k", "language": "triton"}) == Kernel("k", "triton")
    assert checked(tuple[Dim, ...], [1, "s0"]) == (1, "s0")
    with pytest.raises(BadValueError, match=r"^\[1\]: expected int \| str, got null"):
        checked(tuple[Dim, ...], [1, None])


def test_error_messages_never_echo_a_huge_value() -> None:
    """bench/fuzz_sessions.py's case: a 1 MB `schema_version` string must not come back in the message."""
    data = _real()
    data["schema_version"] = "x" * 1_000_000
    with pytest.raises(SessionFormatError) as info:
        loads(json.dumps(data))
    assert len(str(info.value)) < 200
    data = _real()
    set_at(data, "sources", {"k" * 1_000_000: 5})
    with pytest.raises(SessionValidationError) as bad:
        loads(json.dumps(data))
    assert len(str(bad.value)) < 300


def test_a_file_the_app_writes_is_checked_by_position() -> None:
    """Rows place values by position, so a wrong type there is named by its field."""
    packed = json.loads(dumps(load(REAL)))
    assert packed["schema_version"] == SCHEMA_VERSION
    set_at(packed, "compiles[0].compile_id", 5)
    with pytest.raises(SessionValidationError) as info:
        loads(json.dumps(packed))
    assert str(info.value).startswith("compiles[0].compile_id: expected str, got int"), str(info.value)


def test_an_interned_slot_reads_its_default_when_cut_and_is_refused_past_its_table() -> None:
    """`SavedTensor.meta` defaults to a TensorMeta no table row holds: a row cut before it reads
    that default; an index past the table is refused with the table named, never an IndexError."""
    data = _real()
    saved = get_at(data, "compiles[0].aot.saved_tensors")
    saved[0] = saved[0][:1]
    assert loads(json.dumps(data)).compiles[0].aot.saved_tensors[0].meta == TensorMeta()
    set_at(data, f"{NODE}.source", 10**6)
    with pytest.raises(SessionValidationError, match=r"^tables\.SourceLoc: index 1000000 is past the table"):
        loads(json.dumps(data))
