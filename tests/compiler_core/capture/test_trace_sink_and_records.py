"""In-process checks of the trace sink and the FX → session graph conversion.

Uses the `aot_eager` path of a real torch.compile (no C++ compiler) for the sink, and real
FX graphs for the records; the Inductor hooks are covered by the worker captures.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import torch

from compiler_core.capture.graph_records import (
    graph_record,
    module_path,
    normalize_module_fqn,
    parse_stack_trace,
)
from compiler_core.capture.hooks.recording_backend import ARTIFACT_NAME, emit_graph
from compiler_core.capture.hooks.trace_sink import TraceLogSink
from compiler_core.session.model import Graph
from compiler_core.session.wire import checked

HEADER = re.compile(r"^V\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ \S+:\d+\] (\{.*\})$")


def _records(path: Path) -> list[tuple[dict, str | None]]:
    out: list[tuple[dict, str | None]] = []
    for line in path.read_text().splitlines():
        if line.startswith("\t"):
            meta, payload = out[-1]
            out[-1] = (meta, (payload + "\n" if payload is not None else "") + line[1:])
            continue
        m = HEADER.match(line)
        assert m, line
        out.append((json.loads(m.group(1)), None))
    return out


def test_sink_writes_torch_trace_format_and_restores_logger(tmp_path: Path) -> None:
    from torch._logging import structured
    from torch._logging._internal import trace_log

    structured.intern_string("/interned/before/the/sink.py")  # must still reach the log
    before = (trace_log.level, list(trace_log.handlers), trace_log.propagate)

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) + 1

    torch._dynamo.reset()
    seen: list[str] = []
    with TraceLogSink(tmp_path / "t.log", observer=lambda meta, payload: seen.append(next(iter(meta)))):
        torch.compile(f, backend="aot_eager")(torch.randn(4))
    assert (trace_log.level, list(trace_log.handlers), trace_log.propagate) == before

    records = _records(tmp_path / "t.log")
    strings = {m["str"][1]: m["str"][0] for m, _ in records if "str" in m}
    assert "/interned/before/the/sink.py" in strings.values()
    assert sorted(strings) == list(range(len(strings)))  # every id defined, none twice
    kinds = [next(iter(m)) for m, _ in records]
    assert {"dynamo_start", "dynamo_output_graph", "compilation_metrics"} <= set(kinds)
    assert seen == kinds  # the observer saw every record, in order
    for meta, payload in records:
        if payload is not None:
            assert meta["has_payload"]
        if "dynamo_start" in meta:
            assert all(frame["filename"] in strings for frame in meta["dynamo_start"]["stack"])


def test_emitted_graph_round_trips_with_metadata(tmp_path: Path) -> None:
    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.lin(x))

    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[torch.Tensor]) -> object:
        graphs.append(gm)
        emit_graph("dynamo", gm.graph)
        return gm.forward

    torch._dynamo.reset()
    with TraceLogSink(tmp_path / "g.log"):
        torch.compile(Net(), backend=backend, dynamic=True)(torch.randn(5, 4))
    ((meta, payload),) = [(m, p) for m, p in _records(tmp_path / "g.log")
                          if m.get("artifact", {}).get("name") == ARTIFACT_NAME]
    assert "frame_id" in meta and "frame_compile_id" in meta  # logged inside the compile context
    body = json.loads(payload or "")
    assert body["stage"] == "dynamo"
    graph = checked(Graph, body["graph"])
    assert graph == graph_record(graphs[0].graph, "dynamo")
    linear = next(n for n in graph.nodes if n.op == "call_function" and "linear" in n.target)
    assert linear.module_path == "lin"
    assert linear.source is not None and linear.source.file == __file__
    assert linear.source.code == "return torch.relu(self.lin(x))"
    (out,) = linear.outputs
    assert out.dtype == "float32" and out.device == "cpu" and out.shape[1] == 3
    assert isinstance(out.shape[0], str)  # symbolic batch size under dynamic=True
    assert linear.attrs["source_fn"] == "linear:torch.nn.modules.linear.Linear"


def test_stack_trace_parsing_and_module_paths() -> None:
    text = (
        '  File "/u/model.py", line 40, in forward\n    x = x + self.attn(self.ln1(x))\n'
        "            ^^^^^^^^^^\n"
        '  File "/u/model.py", line 22, in forward\n    q = self.qkv(x)\n'
    )
    frames = parse_stack_trace(text)
    expected = [(40, "x = x + self.attn(self.ln1(x))"), (22, "q = self.qkv(x)")]
    assert [(f.line, f.code) for f in frames] == expected
    assert parse_stack_trace(None) == []
    assert normalize_module_fqn("L['self'].layers[0].attn") == "layers/0/attn"
    assert normalize_module_fqn("L['self']._modules['blocks']._modules['3'].mlp") == "blocks/3/mlp"
    assert module_path({"a": ("L['self'].enc", object), "b": ("L['self'].enc.fc", object)}) == "enc/fc"
    assert module_path(None) == ""


def test_sink_does_not_leak_when_nothing_is_logged(tmp_path: Path) -> None:
    from torch._logging._internal import trace_log

    handlers = list(trace_log.handlers)
    sink = TraceLogSink(tmp_path / "empty.log")
    with sink:
        assert len(trace_log.handlers) == len(handlers) + 1
        logging.getLogger("unrelated").warning("not traced")
    assert list(trace_log.handlers) == handlers
    kinds = [next(iter(m)) for m, _ in _records(tmp_path / "empty.log")]
    assert "artifact" in kinds  # the torch_version header tlparse expects


def test_modes_become_inductor_config_for_the_recording_backend() -> None:
    from compiler_core.capture.hooks.recording_backend import mode_config
    from compiler_core.capture.model_run import compile_options
    from compiler_core.modelfile import ModelSpec

    assert mode_config(None, None, None) == {}
    assert mode_config("max-autotune-no-cudagraphs", None, None)["max_autotune"] is True
    assert mode_config("reduce-overhead", {"epilogue_fusion": False}, None) == {
        "triton.cudagraphs": True, "epilogue_fusion": False}
    spec = ModelSpec(path="m.py", model=None, example_inputs=tuple,
                     compile_options={"mode": "max-autotune", "backend": "eager", "fullgraph": True})
    assert compile_options(spec, None, None) == {"mode": "max-autotune", "fullgraph": True}
    assert compile_options(spec, "default", True) == {"fullgraph": True, "dynamic": True}


def test_inspect_config_turns_caches_off_where_replay_is_unverified() -> None:
    import torch

    from compiler_core.capture.hooks.inspect_config import inspect_patches, replay_supported

    # replay is verified (and enabled) from torch 2.13; older torch captures with caches off
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    assert replay_supported() == ((major, minor) >= (2, 13))
    inductor, functorch = inspect_patches(replay=True)
    assert inductor == {"trace.provenance_tracking_level": 1}
    assert functorch == {"force_non_lazy_backward_lowering": True}
    inductor, functorch = inspect_patches(replay=False)
    assert inductor["fx_graph_cache"] is False and functorch["enable_autograd_cache"] is False


def test_sequential_module_paths_drop_torch_wrapper_frame() -> None:
    """Compiling an `nn.Sequential` traces torch's wrapper frame, whose local `fn` is the model:
    its children must read `0`, `2`, not `L/fn/0`, in recorded paths and in lifted parameter names."""
    from compiler_core.analysis.module_paths import param_module

    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 8))
    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, inputs: list[torch.Tensor]) -> object:
        graphs.append(gm)
        return gm.forward

    torch.compiler.reset()
    try:
        torch.compile(model, backend=backend)(torch.randn(4, 8))
    finally:
        torch.compiler.reset()  # torch's module wrapper frame stays cached: later compiles would recompile
    graph = graph_record(graphs[0].graph, "dynamo")
    calls = {n.name: n.module_path for n in graph.nodes if n.op == "call_module" or n.op == "call_function"}
    assert sorted(set(calls.values())) == ["0", "1", "2"], calls
    params = [n.name for n in graph.nodes if n.op == "placeholder" and "_parameters_" in n.name]
    assert params and {param_module(p) for p in params} == {"0", "2"}, params
