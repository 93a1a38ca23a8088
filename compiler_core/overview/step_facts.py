"""The Overview's timed sections: step time per mode with its speedup and spread, and where a
profiled step's time went (kernels, library calls, eager ops outside every compiled graph).

Figures are the timeline's (`queries/step_stats.py`): the medians the app shows (`shown_stats`),
speedups against the paired eager steps where the run measured them, and the speedup's noise
(`speedup_noise`: the block spreads combined). A speedup whose noise is at least its effect is
flagged with `untrustworthy`'s own words, never rounded into a claim.
"""

from __future__ import annotations

from dataclasses import dataclass

from compiler_core.overview.model import Fact, Level, Section, human_bytes, plural
from compiler_core.queries.step_stats import EAGER, shown_stats, speedup_noise, speedups, untrustworthy
from compiler_core.session.model import ModeStats, Session
from compiler_core.session.refs import Ref, RefKind

MAX_KERNELS = 8
EAGER_WHY = ("Outside the compiled graphs: code not under torch.compile (a loss, an optimizer step), a "
             "graph break, or a frame Dynamo skipped")  # fmt: skip


@dataclass(frozen=True)
class ModeFigure:
    """One mode's steady step as the verdict and the report read it."""

    mode: str
    median_ms: float | None
    p99_ms: float | None
    speedup: float | None  # eager median / this mode's; None without eager steps
    noise: float | None  # the speedup's relative spread; None where unknown
    doubt: str  # why the speedup is not to be trusted; "" when it stands out of the noise
    samples: int
    peak_mem_bytes: int | None = None
    baseline_ms: float | None = None  # median of the eager steps run beside this mode's, when paired


def mode_figures(session: Session) -> list[ModeFigure]:
    shown = shown_stats(session)
    speed = speedups(shown)
    return [ModeFigure(m.mode, m.median_ms, m.p99_ms, speed.get(m.mode), speedup_noise(m),
                       untrustworthy(m, speed.get(m.mode)), m.samples, m.peak_mem_bytes,
                       m.baseline_ms if m.mode != EAGER else None)
            for m in shown]  # fmt: skip


def speedup_text(f: ModeFigure) -> str:
    """`1.52× faster than eager (spread ±3 %)`, `0.91× (slower than eager)`."""
    if f.speedup is None:
        return ""
    spread = f" (spread ±{f.noise:.0%})" if f.noise is not None else ""
    if f.speedup >= 1.0:
        return f"{f.speedup:.2f}× faster than eager{spread}"
    return f"{f.speedup:.2f}× eager's speed, slower{spread}"


def doubt_words(f: ModeFigure) -> str:
    """Why a speedup is no claim, in a few words: its spread is unknown or at least its effect."""
    if f.noise is None:
        return "from one block of steps, no spread to trust it by"
    return f"within the noise (spread ±{f.noise:.0%})"


def step_section(session: Session, figures: list[ModeFigure]) -> Section | None:
    if not figures:
        return None
    facts = []
    for f in figures:
        if f.median_ms is None:
            continue
        p99 = f", p99 {f.p99_ms:.3f} ms" if f.p99_ms is not None else ""
        peak = f", peak {human_bytes(f.peak_mem_bytes)}" if f.peak_mem_bytes else ""
        text = f"{f.mode}: {f.median_ms:.3f} ms per step{p99}{peak}"
        if f.mode != EAGER and f.speedup is not None:
            text += f"; {speedup_text(f)}"
            if f.baseline_ms is not None:  # the speedup's eager steps ran beside these, not in eager's run
                text += f", against the eager steps run beside it ({f.baseline_ms:.3f} ms)"
        facts.append(Fact(text, f.doubt, (), Level.WARNING if f.doubt else Level.INFO))
    compiled = [f for f in figures if f.mode != EAGER and f.speedup is not None]
    if compiled:
        best = max(compiled, key=lambda f: f.speedup or 0.0)
        if best.doubt:
            headline = f"Best: {best.mode} at {best.speedup:.2f}× eager's speed, {doubt_words(best)}."
        elif (best.speedup or 0.0) >= 1.0:
            headline = f"Fastest: {best.mode}, {speedup_text(best)}."
        else:
            headline = f"No compiled mode beat eager; the best, {best.mode}, runs at {speedup_text(best)}."
    else:
        headline = f"Timed {plural(len(figures), 'mode')} without an eager baseline: no speedup to state."
    steps = sum(f.samples for f in figures)
    return Section("step_time", "Step time", f"{headline} ({steps} timed steps)", tuple(facts))


def profiled_mode(session: Session) -> ModeStats | None:
    """The mode whose profile the Overview reads: the capture's own when profiled, else the first."""
    joined = [m for m in session.mode_stats if m.runtime is not None and m.runtime.kernels]
    own = next((m for m in joined if m.mode == (session.meta.mode or "default")), None)
    compiled = next((m for m in joined if m.mode != EAGER), None)
    return own or compiled or (joined[0] if joined else None)


def kernel_time_section(session: Session) -> Section | None:
    chosen = profiled_mode(session)
    if chosen is None or chosen.runtime is None:
        return None
    rt = chosen.runtime
    busy = rt.busy_us_per_step or 0.0
    kernels = sorted(((Ref.decode(k), us) for k, us in chosen.time_by_ref.items()), key=lambda kv: -kv[1])
    facts = []
    for ref, us in [kv for kv in kernels if kv[0].kind is RefKind.KERNEL][:MAX_KERNELS]:
        share = f" ({us / busy:.0%} of the busy time)" if busy else ""
        rank = f"rank {ref.rank} " if ref.rank is not None else ""
        facts.append(Fact(f"{ref.name} ({rank}{ref.compile_id} {ref.graph}): {us:.1f} µs per step{share}",
                          refs=(ref,)))  # fmt: skip
    eager = sorted((k for k in rt.kernels if k.kind == "eager"), key=lambda k: -k.us_per_step)
    for k in eager[:3] if chosen.mode != EAGER else ():
        text = f"aten {k.name} ran eagerly, outside every compiled graph: {k.us_per_step:.1f} µs per step"
        facts.append(Fact(text, EAGER_WHY, (), Level.WARNING))
    headline = (f"{chosen.mode}, {plural(rt.steps, 'profiled step')}: {busy / 1000:.3f} ms busy per step"
                if busy else f"{chosen.mode}, {plural(rt.steps, 'profiled step')}")  # fmt: skip
    return Section("kernel_times", "Where the step's time goes", headline + ".", tuple(facts))
