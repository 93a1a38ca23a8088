"""The compile-mode comparison table (the article's "Llama decode" table, on the user's model).

Rows come from the timeline's `ModeStats` (compiler_core/timeline measures them; nothing is
re-timed here), plus what the capture learned about CUDA graphs. Torch- and Qt-free so the CLI
summary, the pane and the GPU script print the same figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from compiler_core.queries.step_stats import mode_speedup, shown_stats
from compiler_core.session.model import ModeStats, Session

MODE_ORDER = ("eager", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
COLUMNS = ("Mode", "Compile (s)", "Step (ms)", "p99 (ms)", "Speedup", "Peak mem (MiB)", "Kernels",
           "Launches/step", "CUDA graphs", "Recompiles")


@dataclass(frozen=True)
class ModeRow:
    mode: str
    compile_s: float | None = None
    step_ms: float | None = None
    p99_ms: float | None = None
    speedup: float | None = None  # eager median / this mode's median
    peak_mib: float | None = None
    kernels: int | None = None
    launches_per_step: int | None = None
    cudagraph_graphs: int | None = None
    recompiles: int = 0
    best: bool = False  # fastest steady-state step among compiled modes

    def cells(self) -> tuple[str, ...]:
        return (
            self.mode if self.mode == "eager" else f'torch.compile(mode="{self.mode}")',
            _fmt(self.compile_s, "{:.1f}"), _fmt(self.step_ms, "{:.3f}"), _fmt(self.p99_ms, "{:.3f}"),
            _fmt(self.speedup, "{:.2f}×"), _fmt(self.peak_mib, "{:.1f}"), _fmt(self.kernels, "{}"),
            _fmt(self.launches_per_step, "{}"), _fmt(self.cudagraph_graphs, "{}"), str(self.recompiles),
        )


def _fmt(value: float | int | None, pattern: str) -> str:
    return "—" if value is None else pattern.format(value)


def mode_rows(stats: Sequence[ModeStats]) -> list[ModeRow]:
    """One row per measured mode, eager first then the article's order; speedups vs eager."""
    by_mode = {s.mode: s for s in stats}
    order = [m for m in MODE_ORDER if m in by_mode] + [m for m in by_mode if m not in MODE_ORDER]
    eager = by_mode.get("eager")
    base = eager.median_ms if eager else None
    rows = []
    for mode in order:
        s = by_mode[mode]
        rows.append(ModeRow(
            mode=mode, compile_s=s.compile_s, step_ms=s.median_ms, p99_ms=s.p99_ms,
            speedup=mode_speedup(s, base),
            peak_mib=s.peak_mem_bytes / 2**20 if s.peak_mem_bytes is not None else None,
            kernels=s.kernels, launches_per_step=s.kernel_launches_per_step,
            cudagraph_graphs=s.cudagraph_graphs, recompiles=s.recompiles,
        ))
    compiled = [r for r in rows if r.mode != "eager" and r.step_ms is not None]
    if compiled:
        fastest = min(compiled, key=lambda r: r.step_ms or 0.0).mode
        rows = [ModeRow(**{**r.__dict__, "best": r.mode == fastest}) for r in rows]
    return rows


def session_mode_rows(session: Session) -> list[ModeRow]:
    """The rows of `session` with the figures every other view shows (`shown_stats`: measured
    from the steps where the session has them): a session saved by an older build stores an
    eager median over steps where the Timeline and `summary` show one over blocks, and the
    stored figure would put a second, different speedup on the same screen."""
    return mode_rows(shown_stats(session))


def text_table(rows: Sequence[ModeRow]) -> str:
    """Plain-text table for the CLI and the GPU script's log."""
    cells = [COLUMNS, *(r.cells() for r in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
