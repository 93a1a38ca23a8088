"""What a log says about its run without being damage: a reset's second run, and the device.

A GPU log compiled twice with `torch._dynamo.reset()` between (bench/corpus, H100, its `.json`
sidecar says what ran) must say "run 2 starts here" as a note, never a warning: the banner counts
warnings and errors as damaged input. The device comes from what only that device's code does;
a CPU log with no generated code at all (`backend="aot_eager"`) still reads cpu, from the
tensors Dynamo described, though torch defines CUDA names in every process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from compiler_core.analysis import import_trace
from compiler_core.queries.summary import summarize

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "corpus" / "logs"
AOT_EAGER = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
torch.compile(model, backend="aot_eager")(torch.randn(4, 8)).sum().backward()
"""


def test_a_gpu_log_compiled_again_after_reset_is_two_runs_and_no_damage() -> None:
    facts = json.loads((CORPUS / "trouble_reset_twice.json").read_text())
    assert facts["corpus_facts"]["scenario"] == "compile+run, reset, compile+run"
    session = import_trace(CORPUS / "trouble_reset_twice.log.xz")
    runs = summarize(session)["runs"]
    assert [r["run"] for r in runs] == [1, 2] and runs[0]["compiles"] == runs[1]["compiles"] > 0
    assert [d.message for d in session.diagnostics if d.severity != "info"] == []
    (start,) = [d for d in session.diagnostics if "run 2 of this log starts here" in d.message]
    assert start.severity == "info" and start.line is not None and "starts again" in start.message
    assert session.meta.device == facts["device"] == "cuda"
    assert session.meta.torch_version == facts["versions"]["torch"]


def test_a_cpu_log_without_generated_code_reads_cpu_from_its_tensors(tmp_path: Path) -> None:
    script = tmp_path / "aot_eager.py"
    script.write_text(AOT_EAGER)
    env = dict(
        os.environ, TORCH_TRACE=str(tmp_path / "trace"), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache")
    )
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    session = import_trace(tmp_path / "trace")
    assert session.compiles and not any(out.output_code for c in session.compiles for out in c.inductor)
    assert session.meta.device == "cpu"
    assert [d.message for d in session.diagnostics if d.severity != "info"] == []
