"""The live timeline's data, held apart from the widgets: samples, markers and figures.

Samples arrive one at a time from the worker (thousands per run); appending must be O(1) and
repainting must not re-walk Python objects, so each mode keeps growing lists of step, ms and
warm-up flags that the plot turns into arrays only when it repaints. Statistics come from
`compiler_core.queries.step_stats` so the table shows exactly the figures the CLI summary prints.
Qt-free, so it is tested without a window.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler_core.queries.step_stats import EAGER, mode_speedup, summarize, with_measured
from compiler_core.session.model import ModeStats, Session, StepSample, TimelineEvent
from compiler_core.timeline.records import EVENT, MODE_START, SAMPLE, STATS, from_record

MODE_ORDER = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


@dataclass
class ModeSeries:
    """One mode's samples in arrival order, as parallel lists (cheap to append and to plot)."""

    mode: str
    steps: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    warmup: list[bool] = field(default_factory=list)
    peak: list[int | None] = field(default_factory=list)
    baseline: list[tuple[int, float]] = field(default_factory=list)  # paired eager (step, ms)
    baseline_warmup: list[bool] = field(default_factory=list)  # per paired step
    start: list[float | None] = field(default_factory=list)  # ms from the run's start, per own step
    baseline_start: list[float | None] = field(default_factory=list)  # per paired step
    events: list[TimelineEvent] = field(default_factory=list)
    measured: ModeStats | None = None  # the worker's final figures, once the mode finished
    revision: int = 0  # grows with every change, so views redo only the modes that changed
    _stats: tuple[int, ModeStats] | None = None

    def add(self, s: StepSample) -> None:
        self.revision += 1
        if s.baseline_for:
            self.baseline.append((s.step, s.ms))
            self.baseline_warmup.append(s.warmup)
            self.baseline_start.append(s.start_ms)
            return
        self.start.append(s.start_ms)
        self.steps.append(s.step)
        self.ms.append(s.ms)
        self.warmup.append(s.warmup)
        self.peak.append(s.peak_mem_bytes)

    def samples(self) -> list[StepSample]:
        own = [StepSample(self.mode, st, ms, w, p, start_ms=t)
               for st, ms, w, p, t in zip(self.steps, self.ms, self.warmup, self.peak, self.start,
                                          strict=True)]
        return own + [StepSample(EAGER, st, ms, w, baseline_for=self.mode, start_ms=t)
                      for (st, ms), w, t in zip(self.baseline, self.baseline_warmup, self.baseline_start,
                                                strict=True)]

    def add_event(self, e: TimelineEvent) -> None:
        self.events.append(e)
        self.revision += 1

    def stats(self) -> ModeStats:
        """Figures from the samples so far (cached per revision); launches, kernels and compile
        time from the worker's final figures when they have arrived."""
        if self._stats is None or self._stats[0] != self.revision:
            self._stats = (self.revision, self._compute_stats())
        return self._stats[1]

    def _compute_stats(self) -> ModeStats:
        live = summarize(self.mode, self.ms, self.warmup, self.peak, self.events,
                         baseline=[ms for _, ms in self.baseline], steps=self.steps,
                         baseline_steps=[(st, w) for (st, _), w in zip(self.baseline, self.baseline_warmup,
                                                                          strict=True)])
        if self.ms or self.measured is None:
            return with_measured(live, self.measured)
        return self.measured  # a session saved without its steps (stage captures): as stored


class TimelineData:
    """All modes' series; `revision` grows with every change so views can skip idle repaints."""

    def __init__(self) -> None:
        self.series: dict[str, ModeSeries] = {}
        self.revision = 0

    def clear(self) -> None:
        self.series.clear()
        self.revision += 1

    def mode(self, name: str) -> ModeSeries:
        if name not in self.series:
            self.series[name] = ModeSeries(name)
            self.series = dict(sorted(self.series.items(), key=lambda kv: _order(kv[0])))
        return self.series[name]

    def add_sample(self, sample: StepSample) -> None:
        self.mode(sample.baseline_for or sample.mode).add(sample)
        self.revision += 1

    def add_event(self, event: TimelineEvent) -> None:
        self.mode(event.mode).add_event(event)
        self.revision += 1

    def add_record(self, record: Mapping[str, Any]) -> None:
        """Any record the run phase emits; a repeated `mode_start` restarts that mode."""
        kind = record.get("event", SAMPLE)
        if kind == SAMPLE:
            self.add_sample(from_record(record, StepSample))
        elif kind == EVENT:
            self.add_event(from_record(record, TimelineEvent))
        elif kind == STATS:
            series = self.mode(str(record["mode"]))
            series.measured = from_record(record, ModeStats)
            series.revision += 1
            self.revision += 1
        elif kind == MODE_START:
            self.series[str(record["mode"])] = ModeSeries(str(record["mode"]))
            self.series = dict(sorted(self.series.items(), key=lambda kv: _order(kv[0])))
            self.revision += 1

    def load(self, samples: Iterable[StepSample], events: Iterable[TimelineEvent],
             stats: Iterable[ModeStats]) -> None:
        self.clear()
        for s in samples:
            self.mode(s.baseline_for or s.mode).add(s)
        for e in events:
            self.mode(e.mode).add_event(e)
        for st in stats:
            self.mode(st.mode).measured = st

    def load_session(self, session: Session) -> None:
        self.load(session.timeline, session.timeline_events, session.mode_stats)

    def all_samples(self) -> list[StepSample]:
        return [s for series in self.series.values() for s in series.samples()]

    def all_events(self) -> list[TimelineEvent]:
        return [e for series in self.series.values() for e in series.events]

    def table(self) -> list[tuple[ModeStats, float | None]]:
        """(figures, speedup vs eager) per mode, in the canonical mode order."""
        stats = [s.stats() for s in self.series.values()]
        eager = next((s.median_ms for s in stats if s.mode == EAGER), None)
        return [(s, mode_speedup(s, eager)) for s in stats]


def _order(mode: str) -> tuple[int, str]:
    return (MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER), mode)
