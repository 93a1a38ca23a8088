"""A session of the wrong shape is refused on load with the field's path.

The validator is derived from the model's type hints, so these tests mutate real session files
(never hand-written dicts) and check the one message a user would see.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from compiler_core.session import SCHEMA_VERSION, SessionFormatError, dumps, load, loads
from compiler_core.session.model import Dim, Kernel
from compiler_core.session.validate import SessionValidationError, validate_as
from tests.conftest import FIXTURES

REAL = FIXTURES / "transformer_block.json"


def _real() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REAL.read_text())
    return data


def _node(d: dict[str, Any]) -> dict[str, Any]:
    node: dict[str, Any] = d["compiles"][0]["dynamo_graph"]["nodes"][3]
    return node


CASES: list[tuple[Callable[[dict[str, Any]], object], str]] = [
    (lambda d: d["compiles"][0].__setitem__("compile_id", 5),
     "compiles[0].compile_id: expected str, got int"),
    (lambda d: _node(d)["outputs"][0]["shape"].__setitem__(0, 1.5),
     "compiles[0].dynamo_graph.nodes[3].outputs[0].shape[0]: expected int or str, got float"),
    (lambda d: d["compiles"][0]["inductor"][0]["kernels"][1].pop("name"),
     "compiles[0].inductor[0].kernels[1].name: missing (required by Kernel)"),
    (lambda d: d.__setitem__("links", {"k": [1]}), "links['k'][0]: expected str, got int"),
    (lambda d: d["meta"].__setitem__("ranks", [True]), "meta.ranks[0]: expected 64-bit int, got bool"),
    (lambda d: d["compiles"][0].__setitem__("rank", 10**30),
     # the stdlib decodes it as a 31-digit int, orjson as a float: refused either way
     "compiles[0].rank: expected 64-bit int or null, got "),
    (lambda d: d.__setitem__("sources", {"a.py": None}), "sources['a.py']: expected str, got null"),
    (lambda d: d.__setitem__("compiles", {"0": {}}), "compiles: expected array, got object"),
    (lambda d: d["compiles"].__setitem__(0, "x"), "compiles[0]: expected object (Compile), got str"),
    (lambda d: d["compiles"][0]["metrics"].__setitem__("stage_s", {"aot": "1"}),
     "compiles[0].metrics.stage_s['aot']: expected number, got str"),
    (lambda d: d["meta"].__setitem__("dynamic", 1), "meta.dynamic: expected bool or null, got int"),
    (lambda d: _node(d).__setitem__("attrs", []), "compiles[0].dynamo_graph.nodes[3].attrs: expected object"),
    # closed vocabularies (session/vocab.py): a word outside one is refused, not carried into refs
    (lambda d: d["compiles"][0]["inductor"][0].__setitem__("graph", "forward:x"),
     "compiles[0].inductor[0].graph: expected one of ['backward', 'forward', 'inference', 'joint'], got"),
    (lambda d: d["compiles"][0].__setitem__("status", "fine"),
     "compiles[0].status: expected one of ['cache_hit', "),
    (lambda d: d["compiles"][0]["dynamo_graph"].__setitem__("kind", "torch"),
     "compiles[0].dynamo_graph.kind: expected one of ['aot_backward', "),
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
    data["compiles"][0]["a_field_from_the_future"] = {"anything": [1, 2]}
    data["float_ok"] = 1
    data["compiles"][0]["metrics"]["total_s"] = 3  # an int where a float is expected is a number
    assert loads(json.dumps(data)).compiles[0].metrics.total_s == 3.0


def test_deep_nesting_is_a_format_error_not_a_crash() -> None:
    deep = '{"schema_version": 1, "compiles": ' + "[" * 200_000 + "]" * 200_000 + "}"
    with pytest.raises(SessionFormatError):
        loads(deep)


def test_fragments_validate_by_type() -> None:
    validate_as(Kernel, {"name": "k", "language": "triton"})
    validate_as(tuple[Dim, ...], [1, "s0"])
    with pytest.raises(SessionValidationError, match=r"^\[1\]: expected int or str, got null"):
        validate_as(tuple[Dim, ...], [1, None])


def test_error_messages_never_echo_a_huge_value() -> None:
    """bench/fuzz_sessions.py's case: a 1 MB `schema_version` string must not come back in the message."""
    data = _real()
    data["schema_version"] = "x" * 1_000_000
    with pytest.raises(SessionFormatError) as info:
        loads(json.dumps(data))
    assert len(str(info.value)) < 200
    data = _real()
    data["sources"] = {"k" * 1_000_000: 5}
    with pytest.raises(SessionValidationError) as bad:
        loads(json.dumps(data))
    assert len(str(bad.value)) < 300


def test_a_packed_session_with_a_word_outside_a_vocabulary_is_refused() -> None:
    packed = json.loads(dumps(load(REAL)))
    compiles = packed["session"][packed["fields"]["Session"].index("compiles")]
    compiles[0][packed["fields"]["Compile"].index("status")] = "fine"
    with pytest.raises(SessionFormatError, match="fine"):
        loads(json.dumps(packed))


def test_a_packed_session_is_checked_on_the_objects_its_rows_build() -> None:
    """Schemas 2 and up place row values by position, so a wrong type there must be caught as well."""
    packed = json.loads(dumps(load(REAL)))
    assert packed["schema_version"] == SCHEMA_VERSION
    session_row = packed["session"]
    compiles = session_row[packed["fields"]["Session"].index("compiles")]
    compiles[0][packed["fields"]["Compile"].index("compile_id")] = 5
    with pytest.raises(SessionValidationError) as info:
        loads(json.dumps(packed))
    assert str(info.value).startswith("compiles[0].compile_id: expected str, got int"), str(info.value)
