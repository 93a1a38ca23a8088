"""A capture's timeline is timed in a fresh interpreter that holds nothing of the capture.

Timing after the capture in the same process reads slow on a GPU against the user's own loop in
a fresh process (docs/benchmarks.md, Findings); the worker execs a new image for the timeline,
which checks itself for what a capture could leave behind before its first timed block."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler_core.session.codec import load
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec

ModelFile = Callable[[str, str], Path]

# The model file records which process ran it, and what that process had seen, at each load.
MODEL = """
import os, sys
import torch

with open(os.environ["CS_LOAD_LOG"], "a") as log:
    log.write(f"{os.getpid()} {'compiler_core.capture.hooks.trace_sink' in sys.modules}\\n")
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
example_inputs = (torch.randn(4, 8),)
"""


@pytest.mark.slow
def test_capture_with_steps_times_in_a_fresh_image_and_says_so(
        model_file: ModelFile, capture_cache: Path, tmp_path: Path) -> None:
    log = tmp_path / "loads.txt"
    path = model_file("m", MODEL)
    spec = CaptureSpec(str(path), str(tmp_path / "s.json"), input_steps=0, steps=20, modes="eager,default")
    env = {**__import__("os").environ, "CS_LOAD_LOG": str(log)}
    client = WorkerClient(spec, cache_dir=capture_cache, env=env)
    assert client.run().returncode == 0, (client.error, client.stderr_tail)
    assert not client.problems() and client.forged_lines == 0  # one authenticated stream across the exec
    kinds = [e.kind for e in client.received]
    assert kinds.count("session") == 1 and kinds.count("done") == 1 and kinds.count("hello") == 1
    assert kinds.index("session") > max(i for i, k in enumerate(kinds) if k == "timeline")
    # the file was loaded twice by one pid: the capture's image, then a fresh one that had not
    # imported the capture's trace sink (a new interpreter, not a fork: the pid is the same)
    loads = [line.split() for line in log.read_text().splitlines()]
    assert len(loads) == 2 and loads[0][0] == loads[1][0] == str(client.proc.pid)  # type: ignore[union-attr]
    assert loads[1][1] == "False"
    session = load(tmp_path / "s.json")
    assert {s.mode for s in session.timeline} == {"eager", "default"}
    assert session.compiles and session.compiles[0].dynamo_graph is not None  # the capture is kept
    assert "fresh interpreter" in session.meta.extra["timeline_process"]


CHECK_AFTER_CAPTURE = """
import sys, tempfile, os
sys.path.insert(0, {root!r})
import torch
from compiler_core.timeline.clean_process import residue
assert residue() == [], residue()
from compiler_core.capture.hooks.trace_sink import TraceLogSink
from compiler_core.capture.hooks.stage_hooks import stage_recorders
from compiler_core.capture.model_run import compile_and_run
from compiler_core.modelfile import load_model_file
spec = load_model_file({model!r})
with TraceLogSink(os.path.join(tempfile.mkdtemp(), "t.log")), stage_recorders():
    compile_and_run(spec, "cpu", None, None, 0, lambda s, st: None, {{}})
found = residue()
print("\\n".join(found))
with torch.device("cpu"):
    print("MODE", any("function mode" in f for f in residue()))
"""


@pytest.mark.slow
def test_a_process_that_captured_is_reported_unclean(model_file: ModelFile, tmp_path: Path) -> None:
    """What the fresh image checks would catch a capture left in the process (in a subprocess of
    its own: a capture in the test process would leave it unclean for every later test)."""
    path = model_file("m2", MODEL)
    root = str(Path(__file__).resolve().parents[3])
    code = textwrap.dedent(CHECK_AFTER_CAPTURE).format(root=root, model=str(path))
    env = {**__import__("os").environ, "CS_LOAD_LOG": str(tmp_path / "l.txt")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "frame(s) were compiled in this process before" in out.stdout
    assert "capture modules loaded" in out.stdout and "trace_sink" in out.stdout
    assert "MODE True" in out.stdout
