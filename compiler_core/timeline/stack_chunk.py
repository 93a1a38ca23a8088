"""Run a call at the start of a fresh CPython data-stack chunk, so where the caller stands on
the stack cannot change what the call costs.

Serves CPython 3.11 and 3.12 (harmless on 3.13 and newer). Since 3.11 the interpreter keeps
Python frames in data-stack chunks of 16 KiB and, up to 3.12, frees a chunk as soon as the frame
that opened it returns (CPython gh-142183; 3.13/3.14 point releases cache one chunk instead). A
hot call that straddles a chunk boundary therefore mmaps, faults in and munmaps a chunk on every
call. Whether a timed loop's hot calls straddle one depends only on how many frames lie below
the loop, and at its worst depth a launch-bound step or a block of small calls runs several
times slower (bench/host_time_diag.py measures it; tests/compiler_core/timeline/test_stack_chunk.py
counts the faults).

`on_fresh_chunk(fn, *args)` calls `fn` from a frame of `PAD_SLOTS` local slots: no chunk in use
has room for it (chunks are 16 KiB unless one frame needs more), so CPython opens a new chunk,
doubled until the frame fits: 64 KiB, of which the frame takes 33 KiB. `fn` and everything it
calls then start at the same place of a chunk of their own, with ~31 KiB of room before the next
boundary, whatever the caller's depth. The chunk is freed when the call returns (one mmap and
munmap per call, not per hot inner call). A call tree deeper than the room still crosses a
boundary, but at the same place every time. Clearing the frame's slots and mapping the chunk
cost once per timed block, outside its clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Over 4,093 slots (what a 32 KiB chunk holds), so the frame needs a 64 KiB chunk (8,189 slots).
PAD_SLOTS = 4200


def _make_pad(slots: int) -> Callable[..., Any]:
    # The locals exist only to size the frame: they are never assigned (the branch never runs),
    # but CPython reserves a slot for each name a function body binds.
    names = " = ".join(f"_s{i}" for i in range(slots))
    source = (
        "def on_fresh_chunk(fn, *args):\n"
        "    if fn is None:\n"
        f"        {names} = None\n"
        "    return fn(*args)\n"
    )
    namespace: dict[str, Any] = {}
    # generated once, from constants only; a pseudo-filename, so tracebacks do not point into
    # this file's docstring
    exec(compile(source, f"<{__name__}: a frame of {slots} slots>", "exec"), namespace)
    pad: Callable[..., Any] = namespace["on_fresh_chunk"]
    pad.__doc__ = "`fn(*args)`, called at the start of a fresh 64 KiB data-stack chunk."
    pad.__module__ = __name__
    return pad


on_fresh_chunk = _make_pad(PAD_SLOTS)
