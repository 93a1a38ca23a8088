"""Step time per mode and the verdict, on sessions recorded from real runs.

The step figures are recomputed here from the stored samples with the standard library (the
median of each 10-step block's mean steady step, half the interquartile range over the median
as the spread), not with the app's statistics module; the verdict is checked to state only
numbers some section shows."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.overview import Level, build_overview
from compiler_core.session import Session, load
from tests.compiler_core.overview.overview_logs import corpus_session
from tests.conftest import FIXTURES, ROOT

SESSIONS = ROOT / "resources" / "sessions"


def _blocks(session: Session, mode: str) -> list[float]:
    blocks: dict[int, list[float]] = {}
    for s in session.timeline:
        if s.mode == mode and not s.baseline_for and not s.warmup:
            blocks.setdefault(s.step // 10, []).append(s.ms)
    return [sum(b) / len(b) for b in blocks.values()]


def _spread(values: list[float]) -> float:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return (q3 - q1) / 2 / statistics.median(values)


@pytest.mark.parametrize("path", [SESSIONS / "transformer_block.json",
                                  FIXTURES / "timeline" / "transformer_cpu_timeline.json"])  # fmt: skip
def test_each_mode_states_its_median_speedup_and_spread_and_flags_noise(path: Path) -> None:
    session = load(path)
    section = build_overview(session).section("step_time")
    assert section is not None
    eager = statistics.median(_blocks(session, "eager"))
    facts = {f.text.split(":", 1)[0]: f for f in section.facts}
    assert facts["eager"].text.startswith(f"eager: {eager:.3f} ms per step")
    flagged = 0
    for mode, fact in facts.items():
        if mode == "eager":
            continue
        blocks = _blocks(session, mode)
        median = statistics.median(blocks)
        speedup, spread = eager / median, _spread(blocks)
        assert fact.text.startswith(f"{mode}: {median:.3f} ms per step")
        assert f"{speedup:.2f}×" in fact.text and f"(spread ±{spread:.0%})" in fact.text
        noisy = spread >= abs(speedup - 1)
        assert (fact.level is Level.WARNING) == noisy, (mode, speedup, spread)
        assert fact.detail.startswith("not trustworthy") if noisy else not fact.detail
        flagged += noisy
    if path.name == "transformer_cpu_timeline.json":
        assert flagged == 1  # default: 1.05× against a ±8 % spread; reduce-overhead stands out


def test_verdict_states_the_best_speedup_with_its_spread() -> None:
    overview = build_overview(load(SESSIONS / "transformer_block.json"))
    step = overview.section("step_time")
    assert step is not None
    shown = re.search(r"default: .*; (1\.\d\d× faster than eager \(spread ±\d+%\))", step.facts[1].text)
    assert shown is not None
    assert overview.verdict == f"No graph breaks; no recompiles; 2 ATen fallback calls; default {shown[1]}"


def test_a_speedup_inside_its_noise_is_not_claimed() -> None:
    """mlp_graph_break: default ran at 0.96× eager's speed with an 11 % spread: no claim either way."""
    overview = build_overview(load(SESSIONS / "mlp_graph_break.json"))
    assert overview.verdict.endswith("default 0.96× eager's speed, within the noise (spread ±11%)")
    step = overview.section("step_time")
    assert step is not None
    assert step.headline.startswith("Best: default at 0.96× eager's speed, within the noise")


@pytest.mark.parametrize("entry", ["trouble_hf_generate_breaks", "trouble_recompile_seq", "dist_ddp_train",
                                   "tv_vit_b16_train", "trouble_reset_twice"])  # fmt: skip
def test_verdict_numbers_all_come_from_the_sections(entry: str) -> None:
    """Every number in the verdict is one a section shows; a log without step times says so."""
    overview = build_overview(corpus_session(entry))
    shown = " ".join(f"{s.headline} {f.text}" for s in overview.sections for f in s.facts)
    shown += " ".join(s.headline for s in overview.sections)
    for number in re.findall(r"\d+(?:\.\d+)?", overview.verdict):
        assert re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.])", shown), (number, overview.verdict)
    assert overview.verdict.endswith("not timed") and "×" not in overview.verdict
    assert "Step time: not timed (capture with --steps, or run the Timeline)" in overview.notes


@pytest.mark.slow
def test_a_captures_measured_break_cost_is_its_share_of_the_step(tmp_path: Path) -> None:
    """A real capture on this CPU of the bundled model with a `.item()` break: the capture
    profiles one step for the eager time between graphs; the verdict states that time as a
    share of the steady default step, recomputed here from the samples."""
    out = tmp_path / "mlp.json"
    env = dict(os.environ, COMPILESCOPE_CACHE_DIR=str(tmp_path / "cache"))
    model = ROOT / "resources" / "examples" / "mlp_graph_break.py"
    command = [sys.executable, "-m", "compiler_core", "capture", str(model), "-o", str(out), "--steps", "20",
               "--modes", "default,eager", "-q"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    session = load(out)
    assert len(session.eager_gaps) > 1  # two compiled regions with eager time between them
    gap = sum(g.ms for cid, g in session.eager_gaps.items() if any(c.compile_id == cid and c.graph_breaks
                                                                  for c in session.compiles))  # fmt: skip
    step = statistics.median(_blocks(session, "default"))
    share = gap / step
    shown = f"{share:.0%}" if share >= 0.1 else f"{share:.1%}"
    overview = build_overview(session)
    assert overview.verdict.startswith(f"1 graph break cost {shown} of the default step ({gap:.3f} ms); ")
    breaks = overview.section("breaks")
    assert breaks is not None and f"{gap:.3f} ms eager per step" in breaks.facts[0].text
