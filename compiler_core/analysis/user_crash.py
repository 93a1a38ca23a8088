"""A compile that ended because the user's code raised while Dynamo traced it: a crash, not a break.

Dynamo runs the user's Python symbolically; when that code raises (a typo'd attribute, a shape
check that fails) and nothing in the compiled function catches it, Dynamo gives the frame up and
the exception leaves the compiled region: the run dies unless a caller catches it. torch (2.7 on)
logs that as a graph break, GB0088 "Observed exception", wrapped in "Failed to handle graph
break gracefully", with the real exception only in its debug context::

    Developer debug context: raised exception AttributeError("'M' object has no attribute 'x'")

and the compile's metrics say `fail_type: Unsupported`. Counted as a break it read as "1 graph
break, 0 ops cut" and Diagnostics said no problem was met. Older torch names the exception
itself as `fail_type` (a builtin exception such as `AttributeError`).
"""

from __future__ import annotations

import builtins
import os
import re
from dataclasses import dataclass
from typing import Any

from compiler_core.session.model import CRASH_STAGE, Compile, Diagnostic, GraphBreak, SourceLoc

OBSERVED = "Observed exception"
_RAISED = re.compile(r"raised exception (\w+(?:\.\w+)*)\((.*)\)\s*$", re.M)
_BUILTIN_ERRORS = frozenset(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, Exception)
)  # fmt: skip


@dataclass(frozen=True)
class UserCrash:
    """The exception the user's code raised, and the user frame it was raised in."""

    exception: str  # AttributeError
    message: str  # 'M' object has no attribute 'missing_layer'
    where: SourceLoc | None

    def text(self) -> str:
        return f"{self.exception}: {self.message}" if self.message else self.exception


def crash_text(crash: UserCrash) -> str:
    """`AttributeError: 'M' object has no attribute 'x' (raised at model.py:8 in forward)`."""
    where = crash.where
    if where is None:
        return crash.text()
    fn = f" in {where.function}" if where.function else ""
    return f"{crash.text()} (raised at {where.file}:{where.line}{fn})"


def crash_diagnostic(c: Compile, crash: UserCrash) -> Diagnostic:
    """An error whose first line says what was raised where (the banner and the Diagnostics row
    show it); the lines after it give the code and what it means for the run."""
    where = crash.where
    label = c.compile_id if c.rank is None else f"rank {c.rank} {c.compile_id}"
    head = f"crash in user code: [{label}] raised {crash.text()}"
    lines = [head]
    if where is not None:
        fn = f" in {where.function}" if where.function else ""
        lines[0] += f" at {os.path.basename(where.file)}:{where.line}{fn}"
        lines.append(f"{where.file}:{where.line}{fn}" + (f": {where.code}" if where.code else ""))
    lines.append("Your code raised this while Dynamo traced it: not a graph break, not a compiler failure. "
                 "It left the compiled function, so the run stopped there unless a caller caught it.")
    return Diagnostic("error", "\n".join(lines), path=where.file if where is not None else "",
                      line=where.line if where is not None else None, stage=CRASH_STAGE)  # fmt: skip


def compiler_failure_diagnostic(c: Compile) -> Diagnostic | None:
    """An error for a compile the compiler itself failed (a backend that raised, an Inductor
    error): by default torch raises it into the user's call, so the run stopped there unless
    `suppress_errors` was on. A failure that is only a graph break the frame fell back from
    (`Unsupported`) is not one."""
    fail_type = c.metrics.fail_type if c.metrics is not None else None
    if c.status != "failed" or not fail_type or fail_type in ("Unsupported", "SkipFrame"):
        return None
    label = c.compile_id if c.rank is None else f"rank {c.rank} {c.compile_id}"
    first = (c.failure or fail_type).strip().splitlines()
    text = " ".join(line.strip() for line in first[:2])
    return Diagnostic("error", f"compile [{label}] failed in the compiler: {text}\nNot your code's "
                      "exception: torch raises it into the compiled call, so the run stopped there "
                      "unless torch._dynamo.config.suppress_errors was on.", stage="compile")


def is_crash_break(brk: GraphBreak) -> bool:
    """A break record that stands for the user's exception leaving the compiled function."""
    return brk.reason == OBSERVED and brk.gb_code in ("", "GB0088")


def user_crash(metrics: dict[str, Any], breaks: tuple[GraphBreak, ...], texts: list[str]) -> UserCrash | None:
    """The crash a failed compile's records describe, or None (not failed, or failed in the
    compiler: Dynamo's own errors, a backend that raised). `texts` are the compile's logged break
    and error payloads, where the exception is named when the metrics are missing."""
    fail_type = metrics.get("fail_type")
    reason = str(metrics.get("fail_reason") or "")
    observed = [b for b in breaks if is_crash_break(b)]
    if not fail_type and not (observed and not any(b.resumable for b in observed)):
        return None  # Dynamo caught the exception in the function (a break it resumed after)
    where = _where(metrics, observed)
    if reason.startswith(OBSERVED) or observed:
        m = _RAISED.search(reason) or next((m for t in texts if (m := _RAISED.search(t))), None)
        exception, message = (m.group(1), _unquote(m.group(2))) if m else ("an exception", "")
        return UserCrash(exception, message, where)
    if isinstance(fail_type, str) and fail_type in _BUILTIN_ERRORS:
        return UserCrash(fail_type, reason.strip().splitlines()[0] if reason.strip() else "", where)
    return None


def _where(metrics: dict[str, Any], observed: list[GraphBreak]) -> SourceLoc | None:
    """The user frame torch names; the break's own location (which has the function and the
    code) when it is the same line."""
    frame = _user_frame(metrics)
    loc = observed[0].location if observed else None
    if frame is None or (loc is not None and (loc.file, loc.line) == (frame.file, frame.line)):
        return loc or frame
    return frame


def _user_frame(metrics: dict[str, Any]) -> SourceLoc | None:
    path, line = metrics.get("fail_user_frame_filename"), metrics.get("fail_user_frame_lineno")
    if isinstance(path, str) and path and isinstance(line, int) and not isinstance(line, bool):
        return SourceLoc(path, line)
    return None


# torch 2.11 prints the exception's arguments as Dynamo's variables:
# `AttributeError([ConstantVariable(str: "'Block' object has no attribute 'x'")])`
_VARIABLE_ARGS = re.compile(r"^\[ConstantVariable\((?:\w+: )?(.*)\)\]$", re.S)


def _unquote(args: str) -> str:
    """`"'M' object has no attribute 'x'"` (one repr'd string argument, or Dynamo's variable
    holding it) -> its text."""
    text = args.strip()
    wrapped = _VARIABLE_ARGS.match(text)
    if wrapped:
        text = wrapped.group(1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text
