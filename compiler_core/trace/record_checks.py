"""Type checks for trace records before anything uses a field.

A log from elsewhere may hold any JSON where torch writes an int (`"attempt": "x"`), a dict
(`"compilation_metrics": [..]`) or a list of frames (`"stack": 7`). Each check below says what
the builder relies on for one record kind or payload; a record that fails one is skipped with a
warning naming its line, and the rest of the log still imports. The checks are declarative
tables, not `try/except` around the builder, so a genuine bug in our own code still fails
loudly in tests (see `build_session`'s last-resort guard, which marks what it catches as an
error the fuzz tests look for).

Only the fields CompileScope reads are checked: an unknown field of any type is fine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]


_INT64 = 1 << 63


def _int(v: Any) -> bool:
    """An int torch could have written: JSON allows any size, but ids, ranks and line numbers
    fit in 64 bits, and the session's encoder refuses a larger one at save time."""
    return isinstance(v, int) and not isinstance(v, bool) and -_INT64 <= v < _INT64


def _opt(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _num(v: Any) -> bool:
    return isinstance(v, float) or _int(v)


def _scalar(v: Any) -> bool:
    return v is None or isinstance(v, str | int | float | bool)


def _list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _dict(v: Any) -> bool:
    return isinstance(v, dict)


def _frame(v: Any) -> bool:
    return isinstance(v, dict) and _opt(_int)(v.get("line")) and _scalar(v.get("filename"))


# Envelope fields any record may carry (compile ids, rank, the Dynamo stack).
ENVELOPE: dict[str, Check] = {
    "frame_id": _opt(_int),
    "frame_compile_id": _opt(_int),
    "attempt": _opt(_int),
    "compiled_autograd_id": _opt(_int),
    "rank": _opt(_int),
    "stack": _opt(_list_of(_frame)),
    "has_payload": _opt(_str),
}

# Metrics fields the builder turns into numbers, ints or strings.
METRICS: dict[str, Check] = {
    "co_firstlineno": _opt(_int),
    "co_name": _opt(_str),
    "co_filename": _opt(_str),
    "fail_type": _opt(_str),
    "fail_reason": _opt(_str),
    "compile_id": _opt(_str),
    "entire_frame_compile_time_s": _opt(_num),
    "backend_compile_time_s": _opt(_num),
    "inductor_compile_time_s": _opt(_num),
    "code_gen_time_s": _opt(_num),
    "graph_op_count": _opt(_int),
    "cudagraph_skip_reason": _opt(_str),
}

# The kind's own metadata value: what each kind must hold for `route` to read it.
KIND_VALUE: dict[str, dict[str, Check] | Check] = {
    "dynamo_start": {"stack": _opt(_list_of(_frame))},
    "compilation_metrics": METRICS,
    "bwd_compilation_metrics": METRICS,
    "artifact": {"name": _str, "encoding": _opt(_str)},
    "str": lambda v: isinstance(v, list) and len(v) == 2 and _str(v[0]) and _int(v[1]),
}

# Chromium trace events: the fields `_chromium` sums stage durations from.
CHROMIUM_EVENT: dict[str, Check] = {
    "name": _str,
    "ph": _opt(_str),
    "ts": _opt(_num),
    "tid": _scalar,
    "args": _opt(_dict),
}


def _string_lists(v: Any) -> bool:
    return isinstance(v, dict) and all(_list_of(_scalar)(nodes) for nodes in v.values())


# Inductor provenance maps: `{"preToPost": {node: [nodes]}, "cppCodeToPost": {...}, ...}`.
PROVENANCE: dict[str, Check] = {
    key: _opt(_string_lists) for key in ("preToPost", "postToPre", "cppCodeToPost", "postToCppCode")
}


def fields_problem(value: Any, table: Mapping[str, Check], what: str) -> str | None:
    """Why `value` (a dict) fails `table`, or None. A non-dict fails too."""
    if not isinstance(value, dict):
        return f"{what} is {type(value).__name__}, expected an object"
    for key, check in table.items():
        if key in value and not check(value[key]):
            return f"{what} field '{key}' has the wrong type ({type(value[key]).__name__})"
    return None


def record_problem(kind: str, meta: dict[str, Any]) -> str | None:
    """Why a record's metadata cannot be used, or None when every field we read is well-typed."""
    problem = fields_problem(meta, ENVELOPE, f"{kind} record")
    if problem:
        return problem
    spec = KIND_VALUE.get(kind)
    if spec is None:
        return None
    value = meta.get(kind)
    if callable(spec):
        return None if spec(value) else f"{kind} value has the wrong type ({type(value).__name__})"
    if value is None and kind == "dynamo_start":
        return None
    return fields_problem(value, spec, f"{kind} value")
