"""`compilescope_cudagraphs` artifact → per-partition CudaGraphInfo, torch-free.

A partition counts as *captured* when cudagraph trees recorded it, *skipped* when Inductor
logged a skip for it (the reason is Inductor's own sentence, incl. the user stack it names), and
unknown (no info) otherwise — e.g. a mode without CUDA graphs, or a graph that never ran twice.
Skips Inductor logged before it knew the partition (`graph == ""`) apply to every partition of
that compile, since one skip disables CUDA graphs for the whole compiled function.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from compiler_core.session.model import CudaGraphInfo
from compiler_core.trace.json_payload import JsonPayloadError, parse_json

ARTIFACT = "compilescope_cudagraphs"
FOUND_AT = re.compile(r'File "([^"]+)", line (\d+)')  # user frames in "Found from :"
PartitionKey = tuple[str, str]  # (compile_id, forward|backward|inference)


@dataclass(frozen=True)
class CudaGraphEvent:
    kind: str  # skip | record | rerecord
    compile_id: str = ""
    graph: str = ""
    message: str = ""
    function: str = ""


def events_from_artifact(payload: str | dict[str, Any]) -> list[CudaGraphEvent]:
    data: Any = payload
    if isinstance(payload, str):
        try:
            data = parse_json(payload)
        except JsonPayloadError:
            return []
    if not isinstance(data, dict):
        return []
    out = []
    events = data.get("events", [])
    for e in events if isinstance(events, list) else []:
        if isinstance(e, dict) and e.get("kind") in ("skip", "record", "rerecord"):
            out.append(CudaGraphEvent(**{k: str(e.get(k, "") or "") for k in
                                         ("kind", "compile_id", "graph", "message", "function")}))
    return out


def cudagraph_from_artifact(
    payload: str | dict[str, Any],
    partitions: dict[str, list[str]] | None = None,
    owners: Callable[[str], list[str]] | None = None,
) -> dict[PartitionKey, CudaGraphInfo]:
    """CudaGraphInfo per (compile id, partition).

    `partitions` maps a compile id to its partition names (e.g. `{"0/0": ["forward", "backward"]}`)
    so compile-level skips can be spread over them and a "forward" event of an inference-only
    compile lands on "inference"; without it, keys are the partitions events name. `owners`
    names the compile(s) an event logged outside any compile belongs to, from its message
    (torch 2.11 decides some skips at the first run, not in the compile).
    """
    events = [_owned(e, owners) for e in events_from_artifact(payload)]
    skips: dict[PartitionKey, list[str]] = defaultdict(list)
    records: set[PartitionKey] = set()
    rerecords: dict[PartitionKey, list[str]] = defaultdict(list)
    for e in events:
        for key in _keys(e, partitions or {}):
            if e.kind == "skip":
                skips[key].append(e.message)
            elif e.kind == "record":
                records.add(key)
            else:
                rerecords[key].append(e.message or "re-recorded (reason not logged)")
    out: dict[PartitionKey, CudaGraphInfo] = {}
    for key in sorted(set(skips) | records | set(rerecords)):
        captured = key in records and not skips.get(key)
        reason = "; ".join(dict.fromkeys(skips.get(key, [])))
        again = tuple(rerecords.get(key, ()))
        out[key] = CudaGraphInfo(captured=captured, skip_reason=reason, rerecords=again)
    return out


def _owned(e: CudaGraphEvent, owners: Callable[[str], list[str]] | None) -> CudaGraphEvent:
    if e.compile_id or owners is None:
        return e
    found = owners(e.message)
    return replace(e, compile_id=found[0]) if len(found) == 1 else e


def _keys(e: CudaGraphEvent, partitions: dict[str, list[str]]) -> list[PartitionKey]:
    known = partitions.get(e.compile_id, [])
    if not e.graph:
        return [(e.compile_id, p) for p in known] or [(e.compile_id, "")]
    if e.graph == "forward" and "forward" not in known and "inference" in known:
        return [(e.compile_id, "inference")]
    return [(e.compile_id, e.graph)]


def skip_summary(reason: str) -> str:
    """Inductor's skip sentence in one line: 'mutated inputs (1 instances) at model.py:23'.

    Drops the 'skipping cudagraphs due to ' lead and the 'Found from :' stack, keeping the first
    user location that stack names."""
    text = reason.strip()
    first = text.splitlines()[0] if text else ""
    first = first.replace("skipping cudagraphs due to ", "")
    first = re.sub(r"\.?\s*Found from\s*:?\s*$", "", first).strip()
    where = FOUND_AT.search(text)
    if where:
        first += f" at {where[1].rsplit('/', 1)[-1]}:{where[2]}"
    return first


def timeline_cudagraphs(session: Any) -> list[tuple[str, int, float | None]]:
    """(mode, graphs recorded, share of the device's busy time inside CUDA graphs) for every
    timeline mode that recorded CUDA graphs: what the run phase saw, where the capture's own
    compile (another mode) recorded none. Counted from the mode's recording markers when its
    figures do not carry the count."""
    recorded: dict[str, int] = defaultdict(int)
    for e in session.timeline_events:
        if e.kind == "cudagraph_record":
            recorded[e.mode] += 1
    out = []
    for m in session.mode_stats:
        graphs = m.cudagraph_graphs or recorded.get(m.mode, 0)
        if not graphs:
            continue
        rt = m.runtime
        share = None
        if rt is not None and rt.cudagraph_us_per_step is not None and rt.busy_us_per_step:
            share = rt.cudagraph_us_per_step / rt.busy_us_per_step
        out.append((m.mode, graphs, share))
    return out
