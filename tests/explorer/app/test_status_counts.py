"""The status bar's counts agree with `python -m compiler_core summary` on a real log."""

from __future__ import annotations

from compiler_core.summary import summarize
from explorer.main_window import MainWindow
from tests.bench_logs import bench_session


def test_status_bar_counts_kernels_as_summary_does(window: MainWindow) -> None:
    session = bench_session("hf_llama_dynamic")
    window.set_session(session, "hf_llama_dynamic.log")
    facts = summarize(session)
    text = window.status_label.text()
    assert f"{facts['kernels']} kernels" in text, text
    assert f"{facts['extern_calls']} extern calls" in text, text
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
    assert f"{len(out.kernels) - extern} kernels + {extern} extern calls" in header, header
