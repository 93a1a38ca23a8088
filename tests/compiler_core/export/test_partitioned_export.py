"""A reduce-overhead compile's kernels, read and exported from Inductor's graph-partition layout
(a real TORCH_TRACE log of tests/fixtures/trace_scripts/partitioned_model.py): every kernel and
extern call the output code launches is in the session with its launches, and every exported
file runs alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.cli import main as cli_main
from tests.compiler_core.export.exported_runs import run_all
from tests.cpu_logs import cpu_log

pytestmark = pytest.mark.slow
_LAUNCH = re.compile(r"^\s+(cpp_\w+)\(|^\s+(extern_kernels\.\w+)\(", re.M)


def test_a_partitioned_compile_is_read_and_exported_whole(tmp_path: Path) -> None:
    log = cpu_log("partitioned_model.py")
    assert log.returncode == 0, log.stdout
    session = import_trace(str(log.path))
    (c,) = session.compiles
    (out,) = c.inductor
    assert "def partition_0(" in out.output_code  # the layout this test is about
    launched = [a or b for a, b in _LAUNCH.findall(out.output_code)]  # the oracle: the code itself
    generated = [k for k in out.kernels if k.language != "extern"]
    externs = [k for k in out.kernels if k.language == "extern"]
    assert sorted(k.name for k in generated) == sorted(n for n in set(launched) if n.startswith("cpp_"))
    assert len(externs) == sum(1 for n in launched if n.startswith("extern_kernels.")) >= 2
    assert all(k.launches >= 1 for k in generated)

    folder = tmp_path / "export"
    assert cli_main(["export", str(log.path), "-o", str(folder)]) == 0
    runs = run_all(sorted(folder.glob("*.py")), tmp_path / "cache")
    assert runs and all(r.returncode == 0 for r in runs.values()), "\n".join(map(str, runs.values()))
