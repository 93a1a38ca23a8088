"""Which mode's profiled times the stage panes show, and how they print. Qt- and torch-free.

The core joins each mode's profiled kernel times to kernels, post-grad nodes and source lines
once (`ModeStats.time_by_ref`, analysis/kernel_times.py); panes only look them up here. They show
the capture's own mode when it was profiled (its kernels are the ones on screen), else the
first compiled mode that was.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler_core.session import Ref, Session
from compiler_core.session.model import ModeStats


@dataclass(frozen=True)
class RuntimeTimes:
    mode: str = ""
    steps: int = 0
    by_ref: dict[Ref, float] = field(default_factory=dict)  # µs per step
    busy_us: float | None = None  # device (CPU: kernel and op) time per step, the heat scale

    def get(self, ref: Ref) -> float | None:
        return self.by_ref.get(ref)

    def share(self, ref: Ref) -> float:
        """This ref's part of the step's busy time, 0..1."""
        us = self.by_ref.get(ref)
        return min(1.0, us / self.busy_us) if us and self.busy_us else 0.0

    def caption(self) -> str:
        if not self.mode:
            return ""
        return f"µs per step: {self.mode}, {self.steps} profiled steps"


def runtime_times(session: Session) -> RuntimeTimes:
    chosen = _chosen(session)
    if chosen is None or chosen.runtime is None:
        return RuntimeTimes()
    by_ref = {Ref.decode(k): v for k, v in chosen.time_by_ref.items()}
    return RuntimeTimes(chosen.mode, chosen.runtime.steps, by_ref, chosen.runtime.busy_us_per_step)


def _chosen(session: Session) -> ModeStats | None:
    joined = [s for s in session.mode_stats if s.time_by_ref and s.runtime is not None]
    own = next((s for s in joined if s.mode == (session.meta.mode or "default")), None)
    return own or (joined[0] if joined else None)


def fmt_us(us: float | None) -> str:
    if us is None:
        return ""
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs" if us < 100 else f"{us:.0f} µs"
