"""CUDA-graph event parsing and the mode-comparison rows (no GPU needed: Inductor's own skip
function is called for real, and tree messages use the exact format cudagraph_trees logs)."""

from __future__ import annotations

import json

from compiler_core.analysis.cudagraph_records import cudagraph_from_artifact, skip_summary
from compiler_core.capture.hooks.cudagraph_capture import CudaGraphRecorder, tree_event
from compiler_core.queries.mode_compare import mode_rows, text_table
from compiler_core.session.model import ModeStats


def test_recorder_catches_inductors_skip_message() -> None:
    from torch._dynamo.utils import counters
    from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

    before = counters["inductor"]["cudagraph_skips"]
    with CudaGraphRecorder() as rec:
        log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (1 instances)")
    assert counters["inductor"]["cudagraph_skips"] == before + 1
    assert [(e.kind, e.message) for e in rec.events] == [
        ("skip", "skipping cudagraphs due to mutated inputs (1 instances)")]
    payload = rec.payload()
    assert payload["skips_counter"] >= 1


def test_tree_messages() -> None:
    rec = tree_event("[0/0] Recording function=1, mode=FORWARD, cuda_graph_id=0, inputs: [f32[8]]")
    assert rec is not None
    assert (rec.kind, rec.compile_id, rec.graph, rec.function) == ("record", "0/0", "forward", "1")
    again = tree_event(
        "[0/1] Re-recording function=2, mode=BACKWARD, reason=static input data pointer changed."
    )
    assert again is not None and again.kind == "rerecord" and again.graph == "backward"
    assert again.message == "static input data pointer changed."
    assert tree_event("[0/0] Recording cudagraph tree for graph without symints") is None


def test_partitions_from_events() -> None:
    payload = json.dumps({"events": [
        {"kind": "record", "compile_id": "0/0", "graph": "forward"},
        {"kind": "record", "compile_id": "0/0", "graph": "backward"},
        {"kind": "rerecord", "compile_id": "0/0", "graph": "backward", "message": "input shape changed"},
        {"kind": "skip", "compile_id": "1/0", "graph": "",
         "message": "skipping cudagraphs due to cpu device (x_1). Found from : File \"m.py\", line 3"},
        {"kind": "record", "compile_id": "2/0", "graph": "forward"},
    ]})
    infos = cudagraph_from_artifact(payload, {"0/0": ["forward", "backward"], "1/0": ["inference"],
                                              "2/0": ["inference"]})
    assert infos[("0/0", "forward")].captured
    assert infos[("0/0", "backward")].rerecords == ("input shape changed",)
    skipped = infos[("1/0", "inference")]
    assert not skipped.captured and skip_summary(skipped.skip_reason).startswith("cpu device (x_1)")
    assert infos[("2/0", "inference")].captured  # "forward" of an inference-only compile
    assert cudagraph_from_artifact("{") == {}


def test_mode_rows_speedup_and_best() -> None:
    stats = [
        ModeStats("reduce-overhead", 10, median_ms=1.0, compile_s=20.0, kernel_launches_per_step=1,
                  cudagraph_graphs=2, peak_mem_bytes=3 * 2**20),
        ModeStats("eager", 10, median_ms=4.0, kernel_launches_per_step=40),
        ModeStats("default", 10, median_ms=2.0, compile_s=10.0, kernels=12, kernel_launches_per_step=12),
    ]
    rows = mode_rows(stats)
    assert [r.mode for r in rows] == ["eager", "default", "reduce-overhead"]
    assert [r.speedup for r in rows] == [1.0, 2.0, 4.0]
    assert [r.best for r in rows] == [False, False, True]
    assert rows[2].peak_mib == 3.0
    table = text_table(rows)
    assert 'torch.compile(mode="reduce-overhead")' in table and "4.00×" in table and "—" in table


def test_a_skip_reason_in_compilation_metrics_marks_the_compiled_graphs_skipped(tmp_path) -> None:
    """A trace from elsewhere (or torch 2.11, whose skip warning we do not hear) still shows the
    skip: torch writes `cudagraph_skip_reason` into the compile's metrics record."""
    import gzip

    from compiler_core.analysis import import_trace
    from tests.conftest import FIXTURES

    text = gzip.decompress((FIXTURES / "traces" / "tlparse_simple.log.gz").read_bytes()).decode()
    reason = "skipping cudagraphs due to mutated inputs (1 instances). Found from : File model.py, line 9"
    marked = text.replace('{"compilation_metrics": {', '{"compilation_metrics": {"cudagraph_skip_reason": '
                          + json.dumps(reason) + ", ", 1)
    assert marked != text
    log = tmp_path / "skipped.log"
    log.write_text(marked)
    plain = import_trace(str(FIXTURES / "traces" / "tlparse_simple.log.gz"))
    session = import_trace(str(log))
    outputs = [o for c in session.compiles for o in c.inductor if o.cudagraph is not None]
    assert outputs, "the compile whose metrics name the skip has its graphs marked"
    assert all(not o.cudagraph.captured and o.cudagraph.skip_reason == reason for o in outputs)  # type: ignore[union-attr]
    assert skip_summary(outputs[0].cudagraph.skip_reason).startswith("mutated inputs")  # type: ignore[union-attr]
    assert not any(o.cudagraph for c in plain.compiles for o in c.inductor), "no reason, no verdict"


def test_a_skip_torch_211_decides_at_run_time_lands_on_its_compile() -> None:
    """Real trace: resources/examples/cudagraph_skip.py captured on an H100 with torch 2.11
    (reduce-overhead). 2.11 decides the mutated-input skip at the first run, outside any compile,
    so the event has no compile id; the user line it names finds the compile."""
    from compiler_core.analysis import import_trace
    from tests.conftest import FIXTURES

    session = import_trace(str(FIXTURES / "traces" / "cudagraph_skip_h100_torch211.log.gz"))
    assert session.meta.torch_version.startswith("2.11")
    [compiled] = [c for c in session.compiles if c.inductor]
    info = compiled.inductor[0].cudagraph
    assert info is not None and not info.captured
    assert skip_summary(info.skip_reason) == "mutated inputs (1 instances) at cudagraph_skip.py:23"
    assert "cudagraph_skip.py\", line 23" in info.skip_reason
