"""Step times per mode before and after, judged against both runs' noise, on a real CPU
timeline (600 recorded steps of eager, default and reduce-overhead)."""

from __future__ import annotations

import dataclasses as dc

from compiler_core.diff import diff_sessions, session_text
from compiler_core.session import Session, load
from tests.conftest import FIXTURES


def _timeline() -> Session:
    return load(str(FIXTURES / "timeline" / "transformer_cpu_timeline.json"))


def test_same_run_is_no_change_and_within_noise() -> None:
    s = _timeline()
    modes = {m.mode: m for m in diff_sessions(s, s).modes}
    assert set(modes) == {"eager", "default", "reduce-overhead"}
    for m in modes.values():
        assert m.change == 0.0 and m.noise is not None and m.noise > 0 and m.beyond_noise is False


def test_slower_mode_is_beyond_noise_and_others_are_not() -> None:
    s = _timeline()
    steps = tuple(dc.replace(t, ms=t.ms * 1.5) if t.mode == "default" and not t.baseline_for else t
                  for t in s.timeline)  # fmt: skip
    slower = dc.replace(s, timeline=steps)
    diff = diff_sessions(s, slower)
    modes = {m.mode: m for m in diff.modes}
    assert modes["default"].beyond_noise is True
    assert modes["default"].change is not None and abs(modes["default"].change - 0.5) < 1e-9
    assert modes["eager"].beyond_noise is False and modes["reduce-overhead"].change == 0.0
    assert "default: " in session_text(diff) and "beyond the noise" in session_text(diff)


def test_a_change_smaller_than_the_spread_is_called_noise() -> None:
    s = _timeline()
    nudged = dc.replace(s, timeline=tuple(dc.replace(t, ms=t.ms * 1.01) if t.mode == "eager" else t
                                          for t in s.timeline))  # fmt: skip
    eager = next(m for m in diff_sessions(s, nudged).modes if m.mode == "eager")
    assert eager.noise is not None and eager.noise > 0.01
    assert eager.beyond_noise is False
