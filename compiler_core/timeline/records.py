"""The streamed form of timeline data: the dicts the worker emits and the pane consumes.

The worker writes one JSON object per line while a run is in progress; each carries an
`"event"` key (`sample`, `timeline_event`, `mode_stats`, `mode_start`) and otherwise exactly
the fields of the session dataclass it stands for, so the pane rebuilds the very objects that
will later land in the saved session. Unknown keys are ignored, which lets the worker add
fields without breaking an older GUI.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from compiler_core.session.links import LinkIndex
from compiler_core.session.model import ModeStats, Session, StepSample, TimelineEvent
from compiler_core.session.wire import checked, plain

SAMPLE = "sample"
EVENT = "timeline_event"
STATS = "mode_stats"
MODE_START = "mode_start"

_KINDS: dict[str, type] = {SAMPLE: StepSample, EVENT: TimelineEvent, STATS: ModeStats}
T = TypeVar("T")


def to_record(value: StepSample | TimelineEvent | ModeStats) -> dict[str, Any]:
    """The emitted dict for a session value: its fields plus the `event` tag."""
    kind = next(k for k, cls in _KINDS.items() if isinstance(value, cls))
    record: dict[str, Any] = {"event": kind}
    record.update(plain(value))
    return record


def from_record(record: Mapping[str, Any], cls: type[T]) -> T:
    """Rebuild a session value from an emitted dict (the `event` tag and extras are ignored)."""
    value: T = checked(cls, {k: v for k, v in record.items() if k != "event"})
    return value


def sample_from_record(record: Mapping[str, Any]) -> StepSample:
    return from_record(record, StepSample)


def event_from_record(record: Mapping[str, Any]) -> TimelineEvent:
    return from_record(record, TimelineEvent)


def with_timeline(
    session: Session,
    samples: Sequence[StepSample],
    events: Sequence[TimelineEvent],
    stats: Sequence[ModeStats],
) -> Session:
    """The session with a run phase's results in place of any earlier timeline; each mode's
    profiled kernel times joined to the session's kernels, nodes and lines (`time_by_ref`), and
    compiled modes given the saved-activation bytes of the session's graphs (`saved_bytes`)."""
    from compiler_core.analysis.kernel_times import join_runtime

    saved = saved_activation_bytes(session)
    index = LinkIndex(session.links)  # one for every mode: each node's source lines walked once
    joined = [dataclasses.replace(
        s, time_by_ref=join_runtime(session, s.runtime, index) if s.runtime else {},
        saved_bytes=None if s.mode == "eager" else saved) for s in stats]
    return dataclasses.replace(
        session, timeline=tuple(samples), timeline_events=tuple(events), mode_stats=tuple(joined)
    )


def saved_activation_bytes(session: Session) -> int | None:
    """Bytes of the tensors forward graphs save for backward, over all compiles; None without
    a backward (an inference session saves nothing)."""
    found = [c.aot.saved_tensors for c in session.compiles if c.aot is not None and c.aot.backward]
    if not found:
        return None
    return sum(t.bytes for tensors in found for t in tensors if not t.is_symint)
