"""Graph breaks from `dynamo_graph_break_reason` artifacts (torch >= 2.6) or restart reasons.

The artifact is free text: `Graph break in user code at FILE:LINE`, `Graph Break Reason: ...`,
then `User code traceback:` with Python traceback frames, then Dynamo's own traceback (ignored).
Older logs only list `restart_reasons` in compilation_metrics; each becomes a break without a
location.
"""

from __future__ import annotations

import re
from typing import Any

from compiler_core.session.model import GraphBreak, SourceLoc

_AT = re.compile(r"Graph break in user code at (.+):(\d+)")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')


def parse_break(text: str) -> GraphBreak:
    lines = text.splitlines()
    location = None
    m = _AT.search(text)
    if m:
        location = SourceLoc(m.group(1).strip(), int(m.group(2)))
    reason = _reason(lines)
    stack = _user_stack(lines)
    if stack and location is not None:
        last = stack[-1]
        if last.file == location.file and last.line == location.line:
            location = last
    elif stack and location is None:
        location = stack[-1]
    return GraphBreak(reason=reason, location=location, user_stack=tuple(stack))


def _reason(lines: list[str]) -> str:
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("Graph Break Reason:"):
            out.append(line[len("Graph Break Reason:") :].strip())
            for nxt in lines[i + 1 :]:
                stop = nxt.startswith(("User code traceback:", "Traceback (most recent"))
                if stop or "Developer debug" in nxt:
                    break
                out.append(nxt.rstrip())
            break
    text = "\n".join(out).strip()
    return text or (lines[0].strip() if lines else "graph break")


def _user_stack(lines: list[str]) -> list[SourceLoc]:
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith("User code traceback:"))
    except StopIteration:
        return []
    frames: list[SourceLoc] = []
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if line.startswith("Traceback (most recent") or (line and not line.startswith(" ")):
            break
        m = _FRAME.match(line)
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            frames.append(SourceLoc(m.group(1), int(m.group(2)), m.group(3).strip(), code))
    return frames


def restart_breaks(metrics: dict[str, Any]) -> tuple[GraphBreak, ...]:
    reasons = metrics.get("restart_reasons") or []
    if not isinstance(reasons, list):
        return ()
    return tuple(GraphBreak(reason=str(r)) for r in reasons if str(r).strip())
