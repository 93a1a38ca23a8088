"""The status bar's counts agree with `python -m compiler_core summary` on a real log."""

from __future__ import annotations

from compiler_core.queries.summary import summarize
from explorer.main_window import MainWindow
from tests.bench_logs import bench_session


def test_status_bar_counts_kernels_as_summary_does(window: MainWindow) -> None:
    session = bench_session("hf_llama_dynamic")
    window.set_session(session, "hf_llama_dynamic.log")
    facts = summarize(session)
    text = window.status_label.text()
    assert f"{facts['kernels']} kernels ({facts['kernel_launches']} launches)" in text, text
    assert f"{facts['extern_calls']} extern calls" in text, text
    # launches counted independently: every `<kernel>.run(` line of the logged output codes
    runs = sum(1 for c in session.compiles for o in c.inductor for line in o.output_code.splitlines()
               if line.lstrip().startswith("triton_") and ".run(" in line)  # fmt: skip
    assert facts["kernel_launches"] == runs > facts["kernels"]
    assert "device: cuda" in text and "torch 2.11.0+cu130" in text, text


def test_inductor_header_splits_kernels_from_extern_calls_as_the_status_bar(window: MainWindow) -> None:
    """The header said 'forward: 2794 → 272 kernels' where the status bar (and summary) count
    Inductor's generated kernels apart from extern calls (cuBLAS mm)."""
    session = bench_session("hf_llama_dynamic")
    window.set_session(session, "hf_llama_dynamic.log")
    current = window.state.current
    assert current is not None
    out = current.inductor[0]
    extern = sum(1 for k in out.kernels if k.language == "extern")
    assert extern
    header = window.panes["InductorPane"].header.text()  # type: ignore[attr-defined]
    launches = sum(k.launches for k in out.kernels if k.language != "extern")
    expected = f"{len(out.kernels) - extern} kernels ({launches} launches) + {extern} extern calls"
    assert expected in header, header


def test_timeline_of_a_log_says_it_has_no_steps_and_forgets_the_last_run(window: MainWindow) -> None:
    """After a session with a timeline, a log without one must not keep the last run's axes over
    an empty plot, and the plot says why it is empty."""
    from compiler_core.session import load
    from explorer.panes.timeline_pane import TimelinePane
    from tests.conftest import FIXTURES

    window.set_session(load(FIXTURES / "timeline" / "transformer_cpu_profiled.json"), "run.json")
    pane: TimelinePane = window.panes["TimelinePane"]  # type: ignore[assignment]
    assert not pane.plot.item.titleLabel.text
    window.set_session(bench_session("hf_llama_dynamic"), "hf_llama_dynamic.log")
    assert "trace log records compiles, not step times" in pane.plot.item.titleLabel.text
    (x0, x1), _ = pane.plot.item.viewRange()
    assert x1 - x0 < 5, "the last run's 20 steps are forgotten"
