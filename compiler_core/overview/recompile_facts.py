"""The Overview's recompile section: each cause with the guard that failed, the line that made
that guard (where the log records it) and the fix; first, any frame that hit Dynamo's
recompile limit and now runs eagerly.

Causes and fixes are `recompile_explain`'s. What this module adds is the guard itself: a
reason `0/0: tensor 'ids' size mismatch at index 1` names the cache entry whose guards failed,
so the failed guard is looked up in that compile's guard list (`check_tensor(L['ids'], ...)`,
or the expression the reason quotes), and its `Guard` carries the user line Dynamo recorded for
it. Newer Dynamo also prints that line after the reason (`# y = x * n  # m.py:9 in f`) and a
`User stack trace:` under it; the stack names the full path, so it is preferred.

The limit: past `recompile_limit` (`cache_size_limit` before torch 2.6) Dynamo refuses to
compile the frame again and runs it eagerly from then on; the refused attempt is logged as a
failed compile whose reason is "Dynamo recompile limit exceeded".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from compiler_core.overview.break_facts import first_line, where
from compiler_core.overview.model import Fact, Level, Section, plural
from compiler_core.queries.recompile_explain import (
    RecompileCause,
    distinct_recompiles,
    explain,
    hit_limit,
    recompiled,
)
from compiler_core.session.model import Compile, Guard, Session, SourceLoc
from compiler_core.session.refs import Ref

_ENTRY = re.compile(r"^\s*(\d+/\d+):\s*", re.M)  # a reason's cache entry: "0/0: ..."
_TENSOR = re.compile(r"^tensor '(.+?)' \w+ mismatch")
_LOCALS = re.compile(r"\b[LG]\['([^']+)'\]")  # guard code `L['x']` reads `x` in a reason
_COMMENT = re.compile(r"\s+#\s.*$")
_QUOTED_AT = re.compile(r"#\s+(?P<code>\S.*?)\s+#\s+(?P<path>\S+\.py):(?P<line>\d+) in (?P<fn>\w+)")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<fn>[^\n]+)\n\s*(?P<code>[^\n]*)')
_SHAPE = re.compile(r"(?:size|stride)=\[[^\]]*\]")
_TORCH_TRY = re.compile(r"to avoid specialization try ([^)]+\))")
_LIMIT_VALUE = re.compile(r"exceeding the (\w+) cache size limit \(currently set to (\d+)\)")


@dataclass(frozen=True)
class GuardOrigin:
    """The failed guard of one recompile and the line that made it."""

    guard_ref: Ref | None
    guard: str  # its code, as Dynamo wrote it
    made_by: SourceLoc | None


def trigger(c: Compile) -> str:
    """The first reason of a recompile (the change that caused it), with the stack lines that
    follow it (an older builder splits one reason over several entries)."""
    text = "\n".join(c.recompile_reasons)
    starts = [m.start() for m in _ENTRY.finditer(text)]
    return text[: starts[1]] if len(starts) > 1 else text


def _expression(reason: str) -> str:
    lines = _ENTRY.sub("", reason, count=1).strip().splitlines()
    return _COMMENT.sub("", lines[0]) if lines else ""


def failed_guard(prev: Compile, reason: str) -> tuple[int, Guard] | None:
    """The guard of `prev` that `reason` says failed: the tensor's `check_tensor` for a
    size/stride/dtype mismatch, else the guard whose code (with `L['x']` read as `x`) is the
    expression the reason quotes."""
    expr = _expression(reason)
    tensor = _TENSOR.match(expr)
    wanted = "check_tensor(" + _LOCALS.sub(r"\1", tensor.group(1)) + "," if tensor else expr
    for i, g in enumerate(prev.guards):
        code = _LOCALS.sub(r"\1", g.code)
        if (tensor and code.startswith(wanted)) or code == wanted:
            return i, g
    return None


CompileKey = tuple[str, int | None, int]  # compile id, rank, run: ids restart in each run


def compile_index(session: Session) -> dict[CompileKey, Compile]:
    return {(c.compile_id, c.rank, c.run): c for c in session.compiles}


def guard_origin(index: dict[CompileKey, Compile], c: Compile) -> GuardOrigin:
    """`index`: `compile_index(session)`, built once (a cause each looking its previous compile
    up in a list of compiles would scan it once per cause)."""
    reason = trigger(c)
    entry = _ENTRY.match(reason)
    prev = index.get((entry.group(1), c.rank, c.run)) if entry else None
    found = failed_guard(prev, reason) if prev is not None else None
    ref = Ref.guard(prev.compile_id, found[0], prev.rank) if prev is not None and found else None
    frames = list(_FRAME.finditer(reason))
    if frames:
        f = frames[-1]
        made = SourceLoc(f["path"], int(f["line"]), f["fn"].strip(), f["code"].strip())
    elif found is not None and found[1].source is not None:
        made = found[1].source
    elif quoted := _QUOTED_AT.search(reason):
        made = SourceLoc(quoted["path"], int(quoted["line"]), quoted["fn"], quoted["code"])
    else:
        made = None
    return GuardOrigin(ref, found[1].code if found else "", made)


def short_guard(code: str) -> str:
    """A tensor guard without its dispatch keys: `check_tensor(L['x'], …, size=[2, 32], stride=[32, 1])`."""
    if not code.startswith("check_tensor("):
        return first_line(code, 200)
    subject = code[len("check_tensor(") :].split(", ", 1)[0]
    shape = ", ".join(m.group(0) for m in _SHAPE.finditer(code))
    return f"check_tensor({subject}, …{', ' + shape if shape else ''})"


def _by_id(compiles: Iterable[Compile]) -> dict[str, list[Compile]]:
    out: dict[str, list[Compile]] = {}
    for c in compiles:
        if c.recompile_reasons:
            out.setdefault(c.compile_id, []).append(c)
    return out


def recompile_fact(index: dict[CompileKey, Compile], cause: RecompileCause,
                   recompiled: dict[str, list[Compile]]) -> Fact:  # fmt: skip
    compiles = [c for cid in dict.fromkeys(cause.compile_ids) for c in recompiled.get(cid, [])]
    frame = SourceLoc(cause.file, cause.line, cause.function) if cause.file else None
    what = cause.in_words() if cause.fix else f"guard {cause.guard} failed"  # no words for it in explain()
    text = f"Recompiled {cause.count}×: {what}" + (f" ({where(frame)})" if frame else "")
    origin = guard_origin(index, compiles[0]) if compiles else GuardOrigin(None, "", None)
    detail = []
    if origin.guard:
        detail.append(f"Guard that failed: {short_guard(origin.guard)}")
    if origin.made_by is not None:
        code = f": {origin.made_by.code}" if origin.made_by.code else ""
        detail.append(f"Guard made by {origin.made_by.file}:{origin.made_by.line}{code}")
    fix = cause.fix
    if not fix and (torch_try := _TORCH_TRY.search(trigger(compiles[0]) if compiles else "")):
        fix = f"{torch_try.group(1)} (torch's own suggestion)"
    if fix:
        detail.append(f"Fix: {fix}")
    refs: list[Ref] = [Ref.compile(c.compile_id, c.rank) for c in compiles]
    if origin.guard_ref is not None:
        refs.append(origin.guard_ref)
    if frame is not None:
        refs.append(Ref.source_line(frame.file, frame.line, compiles[0].rank if compiles else None))
    level = Level.WARNING if cause.count > 1 else Level.INFO
    return Fact(text, "\n".join(detail), tuple(refs), level)


def limit_fact(frames: dict[tuple[int | None, int | None, int], list[Compile]], c: Compile) -> Fact:
    """A frame Dynamo stopped compiling: which one, how many compiles it had, the last change.
    `frames`: the compiles of each (frame, rank, run); the refused one has no code of its own."""
    mine = frames.get((c.frame_id, c.rank, c.run), [])
    frame = c.code or next((o.code for o in mine if o.code is not None), None)
    before = sum(1 for o in mine if o.status != "failed")
    limit = _LIMIT_VALUE.search(c.failure or c.metrics.fail_reason)
    said = f" ({limit.group(1)} = {limit.group(2)})" if limit else ""
    rank = f"rank {c.rank}: " if c.rank is not None else ""
    text = (f"{rank}Frame {where(frame)} hit Dynamo's recompile limit{said} after "
            f"{plural(before, 'compile')}: it now runs eagerly")  # fmt: skip
    guard, _change, fix = explain(trigger(c)) if c.recompile_reasons else ("", "", "")
    detail = [f"Last guard that failed: {guard}"] if guard else []
    knob = limit.group(1) if limit else "recompile_limit"
    detail.append(f"Fix: {fix + '; or ' if fix else ''}raise torch._dynamo.config.{knob} if the recompiles "
                  "are expected")  # fmt: skip
    refs = [Ref.compile(c.compile_id, c.rank)]
    if frame is not None:
        refs.append(Ref.source_line(frame.file, frame.line, c.rank))
    return Fact(text, "\n".join(detail), tuple(refs), Level.WARNING)


def limit_words(limited: list[Compile]) -> str:
    """`1 frame hit the recompile limit on 2 ranks and now runs eagerly`: frames counted once
    however many ranks hit the limit in them."""
    frames = len({(c.frame_id, c.run) for c in limited})
    ranks = len({c.rank for c in limited})
    on = f" on {ranks} ranks" if ranks > 1 else ""
    verb = "runs" if frames == 1 else "run"
    return f"{plural(frames, 'frame')} hit the recompile limit{on} and now {verb} eagerly"


def recompile_count(session: Session) -> int:
    """Recompiles that happened: compiles with a recompile reason, less those Dynamo refused."""
    return sum(1 for c in session.compiles if recompiled(c))


def recompile_section(session: Session) -> tuple[Section, list[RecompileCause], list[Compile]]:
    """The section, its causes and the compiles that hit the limit (the verdict counts both)."""
    limited = [c for c in session.compiles if hit_limit(c)]
    causes = distinct_recompiles(session, all_ranks=True)  # attempts refused at the limit are none
    recompiled = _by_id(c for c in session.compiles if not hit_limit(c))
    frames: dict[tuple[int | None, int | None, int], list[Compile]] = {}
    for c in session.compiles if limited else ():
        frames.setdefault((c.frame_id, c.rank, c.run), []).append(c)
    facts = [limit_fact(frames, c) for c in limited]
    index = compile_index(session)
    facts += [recompile_fact(index, cause, recompiled) for cause in causes]
    total = recompile_count(session)
    if not total and not limited:
        return Section("recompiles", "Recompiles", "No recompiles recorded."), causes, limited
    headline = f"{plural(total, 'recompile')} from {plural(len(causes), 'cause')}"
    if limited:
        headline += f"; {limit_words(limited)}"
    return Section("recompiles", "Recompiles", headline + ".", tuple(facts)), causes, limited
