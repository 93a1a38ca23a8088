"""One user exception, one crash: the compile it escaped from, not every frame that traced into it.

When the user's code raises while Dynamo traces an outer frame that inlines the raising function
(a model's forward calling a block's), Dynamo finds no handler, gives the outer frame up
(`fail_type: Unsupported`, "Observed exception") and runs it eagerly. Running it eagerly calls
the inner function, which Dynamo then compiles as a frame of its own; that compile meets the same
exception in the frame's own code, and that is where it leaves the compiled region and ends the
run. Both compiles log the same exception at the same line: the outer one absorbed it (fell back
to eager and the run went on), so it is neither a crash nor a failure. A frame compiled again that
raises again in its own code (a caller that caught the exception and called again) is a crash
each time.
"""

from __future__ import annotations

from dataclasses import replace

from compiler_core.analysis.compile_records import CompileRecords
from compiler_core.analysis.user_crash import UserCrash, crash_text
from compiler_core.session.model import Compile, SourceLoc
from compiler_core.session.vocab import CompileStatus


def settle_crashes(built: list[tuple[CompileRecords, Compile]]) -> list[tuple[CompileRecords, Compile]]:
    """`built` (one log's compiles in log order) with each absorbed crash cleared: its compile
    becomes a frame Dynamo skipped, naming the compile the exception escaped from."""
    out = list(built)
    for i, (acc, c) in enumerate(built):
        crash = acc.crash
        if crash is None or crash.where is None:
            continue
        near = _nearness(c.code, crash.where)
        later = next((lc for la, lc in built[i + 1:] if la.crash is not None and la.run == acc.run
                      and _same(la.crash, crash) and _nearness(lc.code, crash.where) > near), None)
        if later is None:
            continue
        acc.crash = None
        label = later.compile_id if later.rank is None else f"rank {later.rank} {later.compile_id}"
        out[i] = (acc, replace(c, status=CompileStatus.SKIPPED, failure=(
            f"fell back to eager: {crash_text(crash)} was raised in a function this frame inlines; "
            f"Dynamo ran the frame eagerly, and the exception left the compiled region in [{label}]")))
    return out


def _same(a: UserCrash, b: UserCrash) -> bool:
    where_a, where_b = a.where, b.where
    return (a.exception, a.message) == (b.exception, b.message) and where_a is not None and \
        where_b is not None and (where_a.file, where_a.line) == (where_b.file, where_b.line)


def _nearness(code: SourceLoc | None, where: SourceLoc) -> tuple[bool, int]:
    """How closely a compiled frame encloses the raising line: a frame of the same file starting
    at or above the line, the nearest start first; a frame elsewhere does not enclose it."""
    if code is None or code.file != where.file:
        return (False, -1)
    return (True, code.line if code.line <= where.line else -1)
