"""Type-check decoded session JSON against the model's own type hints, before anything is built.

A session file is data from someone else. Schema 1 is checked as decoded JSON; schema 2 (packed
rows, placed by position) is checked on the objects its rows built, with the same closures (a
dataclass instance of the right class stands for its object, a tuple for its array).

Without this check a `"compile_id": 5` would go straight into a `Compile` and on to pyqtgraph,
which dies with SIGSEGV in `_pythonToCppCopy`. So one pass either accepts the session
or raises `SessionValidationError` naming the first bad field the way a reader would write it:

    compiles[0].compile_id: expected str, got int

The checker is generated from the dataclasses in `model.py` (str, int, float, bool, `X | None`,
unions such as `int | str`, `tuple[X, ...]`, `dict[str, X]`, nested dataclasses, enums), so a field
added there is checked with no change here. Unknown keys are ignored (newer files stay readable),
a missing field without a default is an error, and ints must fit in 64 bits (Qt takes C ints).

Speed: it runs on 100 MB sessions, so each type gets one specialised closure, built once per type
(`_checker` is cached); sequences of plain values are checked with one `all()` over the list;
the path of a bad field is assembled only while an error unwinds, never on the good path. The
cost is linear in the size of the JSON (measured: see `bench/session_validation.py`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from enum import Enum
from functools import cache
from typing import Any

from compiler_core.session.codec import SessionFormatError
from compiler_core.session.model import Session

Check = Callable[[Any], None]
INT_MAX = 2**63 - 1
INT_MIN = -(2**63)


class SessionValidationError(SessionFormatError):
    """The session's JSON does not match the schema; `path` names the field, `str()` says all."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'session'}: {problem}")
        self.path = path
        self.problem = problem


class _BadValueError(Exception):
    """Raised at the bad value; each enclosing container prepends its step while unwinding."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.steps: list[str] = []


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "array", bool: "bool", str: "str", int: "int", float: "float"}.get(
        type(value), type(value).__name__
    )


def _expected(what: str, value: Any) -> _BadValueError:
    if type(value) is int and "int" in what:
        return _BadValueError(f"expected {what}, got an int of {len(str(abs(value)))} digits")
    return _BadValueError(f"expected {what}, got {_kind(value)}")


def validate_session(data: Any) -> None:
    """Raise SessionValidationError unless `data` (decoded JSON) fits the `Session` schema."""
    try:
        _checker(Session)(data)
    except _BadValueError as bad:
        path = "".join(reversed(bad.steps)).lstrip(".")
        raise SessionValidationError(path, bad.problem) from None


def validate_as(tp: Any, data: Any) -> None:
    """The same check for any model type (used by tests and by callers holding a fragment)."""
    try:
        _checker(tp)(data)
    except _BadValueError as bad:
        raise SessionValidationError("".join(reversed(bad.steps)).lstrip("."), bad.problem) from None


# ----- one closure per type -----

def _plain_test(tp: Any) -> Callable[[Any], bool] | None:
    """A cheap predicate for leaf types (used inside sequences and dicts), or None."""
    if tp is str:
        return lambda v: type(v) is str
    if tp is bool:
        return lambda v: type(v) is bool
    if tp is int:
        return lambda v: type(v) is int and INT_MIN <= v <= INT_MAX
    if tp is float:
        return lambda v: type(v) is float or (type(v) is int and INT_MIN <= v <= INT_MAX)
    if tp is Any or tp is object:
        return lambda v: True
    return None


@cache
def _checker(tp: Any) -> Check:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union(typing.get_args(tp))
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(args[0])
        return _fixed_tuple(args)
    if origin is dict:
        return _mapping(typing.get_args(tp)[1])
    if isinstance(tp, type) and issubclass(tp, Enum):
        values = frozenset(m.value for m in tp)

        def check_enum(v: Any) -> None:
            if isinstance(v, tp):
                return
            if type(v) not in (str, int, float, bool) or v not in values:  # a list is unhashable
                raise _BadValueError(f"expected one of {sorted(map(str, values))}, got {v!r:.60}")
        return check_enum
    test = _plain_test(tp)
    if test is None:
        raise TypeError(f"validate: no rule for type {tp!r}")  # a model type we do not know yet
    name = _plain_name(tp)

    def check_plain(v: Any) -> None:
        if not test(v):
            raise _expected(name, v)
    return check_plain


def _union(args: tuple[Any, ...]) -> Check:
    optional = type(None) in args
    members = [a for a in args if a is not type(None)]
    if len(members) == 1 and _plain_test(members[0]) is None:
        inner = _checker(members[0])

        def check_optional(v: Any) -> None:
            if v is not None:
                inner(v)
        return check_optional
    tests = [_plain_test(a) for a in members]
    if all(t is not None for t in tests):  # e.g. `int | str`: plain alternatives
        names = " or ".join("int" if a is int and len(members) > 1 else _plain_name(a) for a in members)
        plain = [t for t in tests if t is not None]

        def check_plain_union(v: Any) -> None:
            if v is None and optional:
                return
            for t in plain:
                if t(v):
                    return
            raise _expected(names + (" or null" if optional else ""), v)
        return check_plain_union
    checkers = [_checker(a) for a in members]

    def check_union(v: Any) -> None:
        if v is None and optional:
            return
        first: _BadValueError | None = None
        for c in checkers:
            try:
                c(v)
                return
            except _BadValueError as bad:
                first = first or bad
        assert first is not None
        raise first
    return check_union


def _sequence(item: Any) -> Check:
    test = _plain_test(item)
    if test is not None:
        def check_plain_list(v: Any) -> None:
            if type(v) is not list and type(v) is not tuple:
                raise _expected("array", v)
            if not all(map(test, v)):
                i = next(i for i, x in enumerate(v) if not test(x))
                bad = _expected(_plain_name(item), v[i])
                bad.steps.append(f"[{i}]")
                raise bad
        return check_plain_list
    inner = _checker(item)

    def check_list(v: Any) -> None:
        if type(v) is not list and type(v) is not tuple:
            raise _expected("array", v)
        for i, x in enumerate(v):
            try:
                inner(x)
            except _BadValueError as bad:
                bad.steps.append(f"[{i}]")
                raise
    return check_list


def _plain_name(tp: Any) -> str:
    return "64-bit int" if tp is int else ("number" if tp is float else getattr(tp, "__name__", str(tp)))


def _fixed_tuple(args: tuple[Any, ...]) -> Check:
    inners = [_checker(a) for a in args]

    def check_tuple(v: Any) -> None:
        if (type(v) is not list and type(v) is not tuple) or len(v) != len(inners):
            raise _expected(f"array of {len(inners)}", v)
        for i, (c, x) in enumerate(zip(inners, v, strict=True)):
            try:
                c(x)
            except _BadValueError as bad:
                bad.steps.append(f"[{i}]")
                raise
    return check_tuple


def _mapping(value_tp: Any) -> Check:
    test = _plain_test(value_tp)
    inner = _checker(value_tp)

    def check_dict(v: Any) -> None:
        if type(v) is not dict:
            raise _expected("object", v)
        if test is not None and all(map(test, v.values())):
            return
        for k, x in v.items():  # keys of decoded JSON are always str
            try:
                inner(x)
            except _BadValueError as bad:
                bad.steps.append(f"[{k!r:.80}]")
                raise
    return check_dict


def _dataclass(cls: type) -> Check:
    hints = typing.get_type_hints(cls)
    fields = [
        (f.name, _checker(hints[f.name]),
         f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
        for f in dataclasses.fields(cls)
    ]
    label = cls.__name__

    def check_object(v: Any) -> None:
        if type(v) is cls:  # an object built from a packed (schema 2) row: check what it holds
            for name, check, _required in fields:
                try:
                    check(getattr(v, name))
                except _BadValueError as bad:
                    bad.steps.append(f".{name}")
                    raise
            return
        if type(v) is not dict:
            raise _expected(f"object ({label})", v)
        for name, check, required in fields:
            if name in v:
                try:
                    check(v[name])
                except _BadValueError as bad:
                    bad.steps.append(f".{name}")
                    raise
            elif required:
                missing = _BadValueError(f"missing (required by {label})")
                missing.steps.append(f".{name}")
                raise missing
    return check_object
