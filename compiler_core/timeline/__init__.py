"""Step-time timelines: the run phase (worker only, imports torch lazily), its statistics and
its exports. Statistics, records and exporters are torch-free, so the GUI uses them too."""

from compiler_core.timeline.exporters import chrome_trace, samples_csv, write_chrome_trace, write_csv
from compiler_core.timeline.records import (
    event_from_record,
    sample_from_record,
    to_record,
    with_timeline,
)
from compiler_core.timeline.run_phase import DEFAULT_STEPS, MODES, run_phase
from compiler_core.timeline.stats import all_mode_stats, median, mode_stats, percentile, speedup, speedups

__all__ = [
    "DEFAULT_STEPS",
    "MODES",
    "all_mode_stats",
    "chrome_trace",
    "event_from_record",
    "median",
    "mode_stats",
    "percentile",
    "run_phase",
    "sample_from_record",
    "samples_csv",
    "speedup",
    "speedups",
    "to_record",
    "with_timeline",
    "write_chrome_trace",
    "write_csv",
]
