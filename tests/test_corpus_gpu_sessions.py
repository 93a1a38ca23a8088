"""The app's own GPU sessions of corpus models (bench/corpus/sessions/cuda, one H100, torch 2.11),
checked by bench/oracle.py against the logs their runs wrote: Triton kernels against their own code
and Inductor's provenance, the device, and the CUDA graphs a reduce-overhead timeline recorded as
every pane shows them. A capture and a script run of one model map alike here as on the CPU."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from compiler_core.session import Session, load
from tests.bench_scripts import bench_module

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "bench" / "corpus" / "sessions" / "cuda"
NAMES = ("hf_gptneox_train", "script_hf_gptneox_train", "hf_qwen2_infer_bf16", "tv_vit_b16_train")
TIMED = ("hf_qwen2_infer_bf16", "tv_vit_b16_train")


@functools.cache
def _oracle() -> ModuleType:
    return bench_module("oracle")


@functools.cache
def _unpacked(name: str) -> Path:
    path: Path = _oracle()._unpacked(SESSIONS / f"{name}.json.xz")
    return path


@functools.cache
def _session(name: str) -> Session:
    return load(_unpacked(name))


def _markers(session: Session) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in session.timeline_events:
        if e.kind == "cudagraph_record":
            out[e.mode] = out.get(e.mode, 0) + 1
    return out


@pytest.mark.parametrize("name", NAMES)
def test_gpu_session_passes_the_oracle(name: str) -> None:
    oracle = _oracle()
    facts = oracle._session_facts(SESSIONS / f"{name}.json.xz")
    assert facts["device"] == "cuda" and "explain" in facts  # the corpus was made on the same GPU
    cells = oracle.check(oracle.Entry(name, [_unpacked(name)], facts))
    failed = {c: why for c, (verdict, why) in cells.items() if verdict == "FAIL"}
    assert not failed, (name, failed)
    for check in ("runs", "graphs", "explain", "sources", "kernel_claims", "fold", "device", "crash"):
        assert cells[check][0] == "ok", (name, check, cells[check])
    if name in TIMED:
        assert cells["cudagraphs"][0] == "ok" and cells["speedups"][0] == "ok", (name, cells)


@pytest.mark.parametrize("name", NAMES)
def test_every_triton_kernel_is_checked_against_the_logs_own_record(name: str) -> None:
    """GPU kernels are Triton: each one the app lists is named in the log's output code or
    provenance, so kernel_claims compares it rather than skipping it, and it claims no node the
    log leaves out."""
    oracle = _oracle()
    session = _session(name)
    raw = oracle.RawLog.read([oracle.trace_beside(_unpacked(name))])
    assert raw.device == "cuda"
    kernels = [k for c in session.compiles for o in c.inductor for k in o.kernels if k.language != "extern"]
    assert kernels and {k.language for k in kernels} == {"triton"}
    for k in kernels:
        known = raw.kernel_nodes.get(k.name, set()) | raw.launch_nodes.get(k.name, set())
        assert raw.kernel_nodes.get(k.name), k.name
        assert k.fused_nodes and set(k.fused_nodes) <= known | set(k.inferred_nodes), k.name


def test_capture_and_script_run_map_alike_on_the_gpu() -> None:
    def shape(session: Session) -> list[Any]:
        return [(c.compile_id, len(c.dynamo_graph.nodes) if c.dynamo_graph else None,
                 [(str(o.graph), len(o.kernels)) for o in c.inductor]) for c in session.compiles]

    def claims(session: Session) -> set[tuple[str, frozenset[str]]]:
        return {(k.name, frozenset(k.fused_nodes)) for c in session.compiles for o in c.inductor
                for k in o.kernels if k.language != "extern"}

    capture, script = _session("hf_gptneox_train"), _session("script_hf_gptneox_train")
    assert shape(capture) == shape(script)
    assert claims(capture) == claims(script)
    assert all(nodes for _, nodes in claims(capture))


@pytest.mark.parametrize("name", TIMED)
def test_reduce_overhead_graphs_read_alike_in_every_pane(qtbot, name: str) -> None:  # type: ignore[no-untyped-def]
    """The CUDA graphs pane names the graphs the reduce-overhead run recorded and the share of
    the GPU's time inside them, as the Timeline table and the Modes table do."""
    from compiler_core.queries.mode_compare import session_mode_rows
    from explorer.panes.cudagraph_pane import CudaGraphPane
    from explorer.state import SessionState
    from explorer.state.timeline_data import TimelineData

    session = _session(name)
    markers = _markers(session)
    assert set(markers) == {"reduce-overhead"}
    state = SessionState()
    pane = CudaGraphPane(state, state.selection)
    qtbot.addWidget(pane)
    pane.on_session(session)
    text = pane.note.text()
    assert "No CUDA-graph information" not in text
    assert f"reduce-overhead: {markers['reduce-overhead']} graph(s) recorded" in text
    data = TimelineData()
    data.load_session(session)
    for stats, _ in data.table():
        rt = stats.runtime
        assert rt is not None and rt.busy_us_per_step
        share = (rt.cudagraph_us_per_step or 0.0) / rt.busy_us_per_step
        if stats.mode in markers:
            assert share > 0.5 and f"{share:.0%} of the GPU's busy time" in text, (stats.mode, share, text)
        else:
            assert share == 0.0, stats.mode
    rows = {r.mode: r.cudagraph_graphs for r in session_mode_rows(session)}
    assert rows == {"eager": 0, "default": 0, "reduce-overhead": markers["reduce-overhead"]}


def test_the_oracle_fails_a_share_that_contradicts_the_recorded_graphs() -> None:
    """Real graphs recorded with the time inside them zeroed: the check must fail, not pass."""
    oracle = _oracle()
    session = _session("hf_qwen2_infer_bf16")
    assert oracle._cudagraphs_across_panes(session)[0] == "ok"
    stats = tuple(dataclasses.replace(m, runtime=dataclasses.replace(m.runtime, cudagraph_us_per_step=0.0))
                  if m.mode == "reduce-overhead" and m.runtime is not None else m for m in session.mode_stats)
    broken = dataclasses.replace(session, mode_stats=stats)
    verdict, why = oracle._cudagraphs_across_panes(broken)
    assert verdict == "FAIL" and "0 % of the GPU's time" in why, why


ARCHITECTURES = 15  # distinct real architectures the GPU corpus must hold


def test_the_gpu_sessions_span_fifteen_real_architectures() -> None:
    """Made by bench/corpus/app_sessions.py on one H100: the app's own capture of each corpus
    model, beside the log its run wrote (the oracle's independent record)."""
    models = {p.name.split(".")[0] for p in SESSIONS.glob("*.json.xz")}
    assert all((SESSIONS / f"{m}.trace.log.xz").exists() for m in models)
    kinds = {m for m in models if not m.startswith(("trouble_", "script_"))}
    assert len(kinds) >= ARCHITECTURES, sorted(kinds)


@pytest.mark.parametrize("name", ["trouble_crash_attr", "hf_qwen2moe_infer", "hf_distilbert_infer"])
def test_small_gpu_sessions_pass_the_oracle(name: str) -> None:
    """A crash in user code, a mixture of experts breaking in every layer, an encoder: each fact
    the oracle can check holds on the GPU session (the larger entries are checked by the bench)."""
    oracle = _oracle()
    facts = oracle._session_facts(SESSIONS / f"{name}.json.xz")
    cells = oracle.check(oracle.Entry(name, [_unpacked(name)], facts))
    failed = {c: why for c, (verdict, why) in cells.items() if verdict == "FAIL"}
    assert not failed, (name, failed)
    for check in ("runs", "graphs", "breaks", "kernel_claims", "device", "crash"):
        assert cells[check][0] == "ok", (name, check, cells[check])
    if name == "trouble_crash_attr":
        assert facts["crashed"] and any(d.severity == "error" for d in _session(name).diagnostics)
