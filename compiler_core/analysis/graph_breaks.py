"""Graph breaks from `dynamo_graph_break_reason` artifacts (torch >= 2.6) or restart reasons.

The artifact is free text. Since torch 2.7 it reads::

    Graph break in user code at FILE:LINE
    Graph Break Reason: Encountered graph break when attempting to trace CALL: ... (generic header)

    Unsupported Tensor.item() call with capture_scalar_outputs=False      (the specific reason)
      Explanation: ...
      Hint: ...                                                          (one or more)

      Developer debug context: ...

     For more details about this graph break, please visit: https://.../gb/gb0124.html

    User code traceback:
      File "...", line N, in fn
        code
    Traceback (most recent call last): ...   (Dynamo's own traceback, ignored)

The generic header is the same for every break at a CALL instruction, so it is kept apart
(`GraphBreak.header`) and `reason` is the specific line under it. Older torch writes the reason on
the `Graph Break Reason:` line itself and has no code, explanation or hints. `location` is the
frame a user would edit: the deepest traceback frame outside torch (Dynamo's own "user code" may
be inside torch.nn when the break is in an inlined module); the frame Dynamo names is the fallback.
Older logs only list `restart_reasons` in compilation_metrics; each becomes a break without a
location, unless it names only the exception class Dynamo restarted with (no break).

When Dynamo cannot resume after a break it logs the break a second time, wrapped:
`Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph
break encountered:` and then the same text. That is one cause, not two: `parse_break` reads the
wrapped break (its reason, code and frame), marks it not resumable, and `merge_wrapped` folds it
into the break it wraps (one row, not a second one with 0 ops cut).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from compiler_core.analysis.frame_owner import is_torch_file, is_user_culprit, without_own_frames
from compiler_core.session.model import GraphBreak, SourceLoc

_AT = re.compile(r"Graph break in user code at (.+):(\d+)")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')
_DOC = re.compile(r"(https?://\S+/gb/(gb\d+)\.html)")
_HEADER = "Encountered graph break"
_NOT_RESUMABLE = "cannot resume"
_WRAPPER = "Failed to handle graph break gracefully"
def parse_break(text: str) -> GraphBreak:
    lines = text.splitlines()
    at = None
    m = _AT.search(text)
    if m:
        at = SourceLoc(m.group(1).strip(), int(m.group(2)))
    block = _reason_block(lines)
    wrapped = bool(block) and block[0].startswith(_WRAPPER)
    if wrapped:  # the wrapper's first line is its header; the wrapped break's text follows
        block = ["", *block[1:]]
    header, reason, explanation, hints = _split_reason(block)
    stack = _user_stack(lines)
    doc = _DOC.search("\n".join(block)) or _DOC.search(text)
    return GraphBreak(
        reason=reason or (lines[0].strip() if lines else "graph break"),
        location=_culprit(stack, at),
        user_stack=tuple(stack),
        header=header or (_wrapper_header(lines) if wrapped else ""),
        gb_code=doc.group(2).upper() if doc else "",
        doc_url=doc.group(1) if doc else "",
        explanation=explanation,
        hints=tuple(hints),
        resumable=not wrapped and _NOT_RESUMABLE not in header,
    )


def _wrapper_header(lines: list[str]) -> str:
    line = next((ln for ln in lines if ln.startswith("Graph Break Reason:")), "")
    return line[len("Graph Break Reason:") :].strip().removesuffix("Graph break encountered:").strip()


def merge_wrapped(breaks: tuple[GraphBreak, ...]) -> tuple[GraphBreak, ...]:
    """Fold each "failed to handle gracefully" break into the break of the same cause (code,
    reason, line) logged before it in the compile: that break then reads not resumable (Dynamo
    skipped the function), and no second row says the same thing with nothing cut."""
    out: list[GraphBreak] = []
    for brk in breaks:
        if brk.header.startswith(_WRAPPER):
            same = next((i for i, b in enumerate(out) if _cause(b) == _cause(brk)), None)
            if same is not None:
                out[same] = _wrapped(out[same], brk)
                continue
        out.append(brk)
    return tuple(out) if len(out) != len(breaks) else breaks


def fold_wrappers_across(compiles: list[Any]) -> list[Any]:
    """`merge_wrapped` over compiles: Dynamo often logs the "failed to handle gracefully" re-log
    in a compile attempt of its own (T5's GB0179 broke in 1/0, its wrapper came as 2/0 and 4/0),
    where a per-compile merge cannot see the break it wraps. Such a wrapper joins the earlier
    break of the same cause in the same rank and run, so no compile counts the cause twice; that
    break reads not resumable only where the wrapper came from the break's own frame."""
    kept: list[list[GraphBreak]] = [[] for _ in compiles]
    seen: dict[tuple[Any, ...], tuple[int, int]] = {}  # (rank, run, cause) -> (compile, break)
    for i, c in enumerate(compiles):
        for brk in c.graph_breaks:
            key = (c.rank, c.run, *_cause(brk))
            if brk.header.startswith(_WRAPPER) and key in seen:
                ci, bi = seen[key]
                # the wrapper says Dynamo skipped the frame it was logged in: the break's own frame
                # only when that is the frame the break was first logged in (T5's GB0179 broke in
                # forward, resumed there, and was re-logged from two other frames it skipped)
                if getattr(compiles[ci], "frame_id", None) == getattr(c, "frame_id", None):
                    kept[ci][bi] = _wrapped(kept[ci][bi], brk)
                continue
            seen.setdefault(key, (i, len(kept[i])))
            kept[i].append(brk)
    return [c if tuple(k) == c.graph_breaks else replace(c, graph_breaks=tuple(k))
            for c, k in zip(compiles, kept, strict=True)]


def _cause(brk: GraphBreak) -> tuple[str, str, tuple[str, int] | None]:
    loc = brk.location
    return brk.gb_code, brk.reason, (loc.file, loc.line) if loc else None


def _wrapped(first: GraphBreak, wrapper: GraphBreak) -> GraphBreak:
    """The break a wrapper re-logs: Dynamo skipped the function, so it is not resumable."""
    return replace(first, resumable=False, header=first.header or wrapper.header)


def _culprit(stack: list[SourceLoc], at: SourceLoc | None) -> SourceLoc | None:
    """The deepest frame the user could change (frame_owner.py); else the deepest outside torch;
    else Dynamo's `at` location (with its code)."""
    for frame in reversed(stack):
        if is_user_culprit(frame.file):
            return frame
    for frame in reversed(stack):
        if not frame.file.startswith("<") and not is_torch_file(frame.file):
            return frame
    if at is not None:
        for frame in reversed(stack):
            if frame.file == at.file and frame.line == at.line:
                return frame
        return at
    return stack[-1] if stack else None


def _reason_block(lines: list[str]) -> list[str]:
    """The lines from `Graph Break Reason:` up to the user traceback (prefix stripped)."""
    for i, line in enumerate(lines):
        if line.startswith("Graph Break Reason:"):
            out = [line[len("Graph Break Reason:") :].strip()]
            for nxt in lines[i + 1 :]:
                if nxt.startswith(("User code traceback:", "Traceback (most recent")):
                    break
                out.append(nxt.rstrip())
            return out
    return []


def _split_reason(block: list[str]) -> tuple[str, str, str, list[str]]:
    """(generic header, specific reason, explanation, hints) of a reason block."""
    if not block:
        return "", "", "", []
    header = ""
    rest = block
    if block[0].startswith(_HEADER):
        header, rest = block[0], block[1:]
    reason = ""
    explanation: list[str] = []
    hints: list[list[str]] = []
    current: list[str] | None = None
    for ln in rest:
        stripped = ln.strip()
        if not reason:
            if stripped:
                reason = stripped
            continue
        if stripped.startswith("Explanation:"):
            explanation = [stripped[len("Explanation:") :].strip()]
            current = explanation
        elif stripped.startswith("Hint:"):
            hints.append([stripped[len("Hint:") :].strip()])
            current = hints[-1]
        elif stripped.startswith(("Developer debug context:", "For more details")) or not stripped:
            current = None
        elif current is not None and ln.startswith("    "):
            current.append(stripped)  # a wrapped explanation or hint continues, indented
        else:
            current = None
    return header, reason, " ".join(explanation), [" ".join(h) for h in hints]


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
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            code = nxt.strip() if nxt.startswith("    ") and not _FRAME.match(nxt) else ""
            frames.append(SourceLoc(m.group(1), int(m.group(2)), m.group(3).strip(), code))
    return [frames[i] for i in without_own_frames([f.file for f in frames])]


# A restart reason that is only an exception class: Dynamo restarted the analysis for itself
# (a scalar it tensorified, a speculation it undid) and the frame still compiled whole
_CLASS_ONLY = re.compile(r"^<class '[\w.]+'>$")


def restart_breaks(metrics: dict[str, Any]) -> tuple[GraphBreak, ...]:
    """The breaks an older log names only in `restart_reasons`. A restart that names no break
    (`<class '...TensorifyScalarRestartAnalysis'>`) is left out: it splits no graph, and torch
    counts no break for it."""
    reasons = metrics.get("restart_reasons") or []
    if not isinstance(reasons, list):
        return ()
    return tuple(GraphBreak(reason=str(r).strip().strip("'\"")) for r in reasons
                 if str(r).strip() and not is_restart_only(str(r)))


def is_restart_only(reason: str) -> bool:
    """A restart reason that names no break, only the exception class Dynamo restarted with."""
    return bool(_CLASS_ONLY.match(reason.strip()))
