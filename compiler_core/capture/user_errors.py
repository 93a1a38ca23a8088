"""Describe a failure in the user's terms: their message first, their frames, not torch's.

A compile error surfaces through dozens of torch frames (Dynamo's bytecode interpreter, AOT,
Inductor); the line the user can act on is in their own file. `describe_failure` keeps frames
outside torch, this package and the standard library, and falls back to the last frames when
there are none (a bug inside torch itself). Torch wraps backend errors (`BackendCompilerFailed`)
and Dynamo appends long hints; we keep the first lines of the message, which carry the cause.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from dataclasses import dataclass

_MAX_MESSAGE_LINES = 12
_MAX_LINE_CHARS = 2_000  # one message line (a huge message is still the user's message, cut)
_MAX_MESSAGE_CHARS = 8_000
_MAX_TRACEBACK_CHARS = 64_000  # the full traceback keeps its head and tail
_FALLBACK_FRAMES = 4


def safe_str(exc: BaseException) -> str:
    """`str(exc)`, or a stand-in when the user's `__str__` itself raises (then it is still the
    user's error, not a CompileScope bug)."""
    try:
        return str(exc)
    except BaseException as inner:  # any failure of user code is reported, never raised
        return f"<str() of this exception raised {type(inner).__name__}>"


def clip(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters, keeping its head and tail."""
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]}\n... [{len(text) - limit} characters cut] ...\n{text[-limit // 2 :]}"


@dataclass(frozen=True)
class FailureReport:
    exc_type: str
    message: str  # "<ExcType>: <first lines of the user's own message>"
    user_traceback: str
    full_traceback: str


def _library_dirs() -> tuple[str, ...]:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # compiler_core/
    dirs = {here + os.sep}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path) + os.sep)
    return tuple(sorted(dirs))


def is_user_file(filename: str, library_dirs: tuple[str, ...] | None = None) -> bool:
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return not any(path.startswith(d) for d in library_dirs or _library_dirs())


def describe_failure(exc: BaseException) -> FailureReport:
    frames = list(traceback.extract_tb(exc.__traceback__))
    cause = _root_cause(exc)
    if cause is not exc and cause.__traceback__ is not None:
        frames += traceback.extract_tb(cause.__traceback__)
    dirs = _library_dirs()
    user = [f for f in frames if is_user_file(f.filename, dirs)]
    shown = user or frames[-_FALLBACK_FRAMES:]
    text = "".join(traceback.format_list(shown))
    message = _message(cause)
    user_tb = "Traceback (user code):\n" + clip(text, _MAX_TRACEBACK_CHARS) + message + "\n"
    try:
        full = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except BaseException:  # user objects in the chain may raise while being formatted
        full = user_tb
    return FailureReport(type(cause).__name__, message, user_tb, clip(full, _MAX_TRACEBACK_CHARS))


def _root_cause(exc: BaseException) -> BaseException:
    """Torch's wrappers (BackendCompilerFailed, InternalTorchDynamoError) hide the real error."""
    seen = {id(exc)}
    current = exc
    while True:
        try:
            inner = getattr(current, "inner_exception", None) or current.__cause__
        except BaseException:  # a user exception's property may raise anything
            inner = current.__cause__
        if not isinstance(inner, BaseException):
            inner = None
        if inner is None or id(inner) in seen:
            return current
        seen.add(id(inner))
        current = inner


def _message(exc: BaseException) -> str:
    text = safe_str(exc)
    head = text[: _MAX_MESSAGE_CHARS + _MAX_MESSAGE_LINES]  # never split a huge message whole
    lines = [ln for ln in head.strip().splitlines() if ln.strip()][:_MAX_MESSAGE_LINES]
    lines = [ln if len(ln) <= _MAX_LINE_CHARS else ln[:_MAX_LINE_CHARS] + " [...]" for ln in lines]
    body = "\n".join(lines)
    if len(text) > len(head):
        body += f"\n[message cut: {len(text)} characters]"
    return f"{type(exc).__name__}: {body}" if body else type(exc).__name__

