"""Measured cost of graph breaks: the eager time and ops between the graphs a break separates.

Read from one profiled step (torch.profiler, CPU activities). Dynamo wraps each compiled frame's
run in a `Torch-Compiled Region: <compile id>` event; the graph itself runs inside it as
`CompiledFunction` / `## Call CompiledFxGraph ... ##`, and the resume function after a break is
called from inside it, so its region nests. The code a break sends to eager is what lies in a
region between the end of its graph call and the start of the first nested region (or the
region's end): for a ResNet `.item()` break, `aten::item` and `aten::_local_scalar_dense`.

Torch-free: the capture hands plain `(name, start_us, end_us, thread)` tuples here, so this is
tested on real profiles and usable on exported traces.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from compiler_core.session.model import EagerGap

REGION = "Torch-Compiled Region: "
GRAPH_CALLS = ("CompiledFunction", "## Call CompiledFxGraph")

Event = tuple[str, float, float, int]  # name, start µs, end µs, thread


def eager_gaps(events: list[Event]) -> dict[str, EagerGap]:
    """compile id -> the eager window after its graph, for every compiled region of the step.

    A compile that ran several times in the step (a loop) sums its windows."""
    regions = sorted((e for e in events if e[0].startswith(REGION)), key=lambda e: (e[1], -e[2]))
    calls = sorted((e for e in events if e[0].startswith(GRAPH_CALLS)), key=lambda e: e[1])
    aten = sorted((e for e in events if e[0].startswith("aten::")), key=lambda e: (e[1], -e[2]))
    call_starts = [c[1] for c in calls]
    aten_starts = [e[1] for e in aten]  # a training step has ~1e5 aten events: bisect, not scan
    out: dict[str, EagerGap] = {}
    for i, (name, start, end, thread) in enumerate(regions):
        # regions are sorted by start, so the first nested one is the next region inside this one
        stop = next((r[1] for r in regions[i + 1 :] if r[3] == thread and r[2] <= end and r[1] < end), end)
        in_window = calls[bisect_left(call_starts, start) : bisect_left(call_starts, stop)]
        graph_end = max((c[2] for c in in_window if c[3] == thread and c[2] <= stop), default=start)
        window = aten[bisect_left(aten_starts, graph_end) : bisect_left(aten_starts, stop)]
        ops = _top_level(e for e in window if e[3] == thread and e[2] <= stop)
        cid = name[len(REGION) :].strip()
        prev = out.get(cid, EagerGap(0.0, 0))
        out[cid] = EagerGap(prev.ms + max(0.0, stop - graph_end) / 1000.0, prev.ops + ops)
    return out


def _top_level(events: Iterable[Event]) -> int:
    """Ops not nested inside another counted op (aten::item calls aten::_local_scalar_dense)."""
    count, open_until = 0, float("-inf")
    for _name, start, end, _thread in events:
        if start >= open_until:
            count += 1
            open_until = end
    return count
