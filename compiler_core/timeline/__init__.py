"""Step-time timelines, live: the run phase (worker only, imports torch lazily), its clocks,
probes and kernel profile, and the streamed records the worker emits. It sits above `capture`
(it drives the compile hooks while it times steps). The statistics the views show are
torch-free lookups in `queries/step_stats.py`; the CSV and Chrome-trace files are written by
`export/timeline_files.py`."""

from compiler_core.timeline.records import (
    event_from_record,
    sample_from_record,
    to_record,
    with_timeline,
)
from compiler_core.timeline.run_phase import DEFAULT_STEPS, MODES, run_phase

__all__ = [
    "DEFAULT_STEPS",
    "MODES",
    "event_from_record",
    "run_phase",
    "sample_from_record",
    "to_record",
    "with_timeline",
]
