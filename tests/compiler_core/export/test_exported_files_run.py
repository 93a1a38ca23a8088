"""Every file an export writes runs alone in a fresh process: the bundled example sessions (CPU
captures, among them the transformer's output code, which must not abort the interpreter with
glibc malloc errors on an AVX-512 machine), a fresh CPU TORCH_TRACE log exported through the CLI,
and a session without `fx_graph_runnable` (its graph repro generated from the Dynamo graph)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from compiler_core.cli import main as cli_main
from compiler_core.export import REFUSED_EXIT, export_compiles
from compiler_core.export.machine_stamp import session_stamp, torch_minor
from compiler_core.session import Session, load
from tests.compiler_core.export.exported_runs import FileRun, run_all
from tests.conftest import ROOT
from tests.cpu_logs import cpu_log

pytestmark = pytest.mark.slow
SESSIONS = sorted((ROOT / "resources" / "sessions").glob("*.json"))
KERNEL_LINE = re.compile(r": \d+\.\d+ us per (launch|call) \(median of 5 loops of \d+\)")


def _without_runnable(session: Session) -> Session:
    return replace(
        session,
        compiles=tuple(
            replace(c, artifacts={k: v for k, v in c.artifacts.items() if k != "fx_graph_runnable"})
            for c in session.compiles
        ),
    )


Runs = tuple[Session, dict[Path, FileRun]]
SOURCES = [*(p.stem for p in SESSIONS), "cpu_log", "generated_repro"]


class _Exports:
    """Each source exported and its files run once per test module, on first use: a test per
    source keeps each under the suite's per-test timeout on a busy 2-core host."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.done: dict[str, Runs] = {}

    def __getitem__(self, name: str) -> Runs:
        if name not in self.done:
            session, paths = self._export(name, self.root / name)
            runs = run_all(paths, self.root / "inductor-cache")
            self.done[name] = (session, runs)
        return self.done[name]

    @staticmethod
    def _export(name: str, folder: Path) -> tuple[Session, list[Path]]:
        if name == "cpu_log":  # a fresh CPU capture's log, through the CLI
            from compiler_core.analysis import import_trace

            log = cpu_log("tiny_model.py")
            assert cli_main(["export", str(log.path), "-o", str(folder)]) == 0
            return import_trace(str(log.path)), sorted(folder.glob("*.py"))
        if name == "generated_repro":  # no fx_graph_runnable: the repro comes from the Dynamo graph
            bare = _without_runnable(load(ROOT / "resources" / "sessions" / "dynamic_shapes.json"))
            files = export_compiles(bare, folder)
            return bare, [p for p in files if p.name.endswith("graph_repro.py")]
        session = load(ROOT / "resources" / "sessions" / f"{name}.json")
        return session, [p for p in export_compiles(session, folder) if p.suffix == ".py"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> _Exports:
    return _Exports(tmp_path_factory.mktemp("export"))


def _refusal_expected(session: Session) -> bool:
    """Only a torch of another major.minor may refuse here; the vector width is checked below."""
    stamp = session_stamp(session)
    return bool(stamp.torch) and stamp.torch != torch_minor(torch.__version__)


@pytest.mark.parametrize("name", SOURCES)
def test_every_exported_file_runs_or_refuses_as_it_says(exported: _Exports, name: str) -> None:
    capability = torch.backends.cpu.get_cpu_capability()
    session, runs = exported[name]
    assert runs, name
    for run in runs.values():
        if _refusal_expected(session):
            assert run.returncode == REFUSED_EXIT, run
            assert run.output.startswith("not run: generated for another machine; it needs torch"), run
            continue
        if run.returncode == REFUSED_EXIT and capability not in ("AVX2", "AVX512"):
            assert "-bit CPU vectors (this CPU offers" in run.output, run  # an ISA this CPU lacks
            continue
        assert run.returncode == 0, run
        assert "Traceback" not in run.output and "malloc" not in run.output, run


def _needs_this_torch() -> None:
    """The bundled sessions' files run only on the torch they were captured with; on another,
    each refuses (test_every_exported_file_runs_or_refuses_as_it_says holds that)."""
    bundled = load(ROOT / "resources" / "sessions" / "transformer_block.json")
    if _refusal_expected(bundled):
        pytest.skip(f"bundled sessions are from torch {session_stamp(bundled).torch}: "
                    "their files refuse here")


def test_kernel_files_print_their_time_and_cpp_ones_match_eager(exported: _Exports) -> None:
    _needs_this_torch()
    checked = []
    for name in SOURCES:
        _, runs = exported[name]
        for path, run in runs.items():
            if "__" not in path.stem or path.name.endswith(("graph_repro.py",)) or "output_code" in path.name:
                continue
            assert KERNEL_LINE.search(run.output), run
            if "matches eager ATen (rtol=atol=1e-4" in run.output:
                checked.append(f"{name}/{path.name}")
    # the kernels whose pointers the recorded shapes and extern outputs pair without a guess
    assert {
        "mlp_graph_break/c0_0__inference__cpp_fused_mean_relu_0.py",
        "mlp_graph_break/c1_0__inference__cpp_fused_mul_0.py",
        "transformer_block/forward__cpp_fused_gelu_view_3.py",
        "transformer_block/backward__cpp_fused_gelu_gelu_backward_view_1.py",
        "dynamic_shapes/c0_1__inference__cpp_fused_gelu_0.py",
    } <= set(checked), checked
    assert len(checked) >= 7, checked


def test_the_transformer_output_code_runs_instead_of_corrupting_memory(
    exported: _Exports,
) -> None:
    _needs_this_torch()
    _, runs = exported["transformer_block"]
    for part in ("forward", "backward"):
        run = next(r for p, r in runs.items() if p.name == f"output_code_{part}.py")
        assert run.returncode == 0, run
        assert float(run.output.strip().splitlines()[-1]) > 0  # Inductor's own benchmark line
    folder = next(iter(runs)).parent
    assert (
        "MACHINE = {'device': 'cpu', 'torch': '2.13', 'vector_bits': 256"
        in (folder / "output_code_forward.py").read_text()
    )


def test_graph_repros_run_from_the_artifact_or_from_the_dynamo_graph(
    exported: _Exports,
) -> None:
    _needs_this_torch()
    _, runs = exported["generated_repro"]
    assert len(runs) == 2  # dynamic_shapes: two compiles, neither with fx_graph_runnable left
    for path, run in runs.items():
        assert "run_repro" not in path.read_text()
        assert "compiled here and matches eager (rtol=atol=1e-3)" in run.output, run
    _, runs = exported["small_cnn"]
    [(path, run)] = [(p, r) for p, r in runs.items() if p.name == "graph_repro.py"]
    assert "run_repro(" in path.read_text() and "/tmp/rec/" not in path.read_text()
    assert run.returncode == 0, run


def test_the_index_lists_every_file_with_nodes_lines_and_launches(
    exported: _Exports,
) -> None:
    session, runs = exported["transformer_block"]
    folder = next(iter(runs)).parent
    index = json.loads((folder / "index.json").read_text())
    assert index["machine"] == {"device": "cpu", "torch": "2.13", "vector_bits": 256, "threads": 0}
    (entry,) = index["compiles"]
    kernels = [k for o in session.compiles[0].inductor for k in o.kernels]
    assert len(entry["kernels"]) == len(kernels) == 26
    for e in entry["kernels"]:
        assert (folder / e["file"]).is_file() and e["fused_nodes"]
        assert e["launches_per_step"] >= 1  # counted from call() where the session has no count
        assert e["us_per_step"] == {}  # a CPU capture without a profile: nothing measured
    gelu = next(e for e in entry["kernels"] if e["kernel"] == "cpp_fused_gelu_view_3")
    assert any(line.endswith(":41") for line in gelu["source_lines"])
    assert gelu["eager_check"] == "eager ATen, rtol=atol=1e-4"
    md = (folder / "INDEX.md").read_text()
    assert "[graph_repro.py](graph_repro.py)" in md and "| Launches/step | µs/step |" in md
