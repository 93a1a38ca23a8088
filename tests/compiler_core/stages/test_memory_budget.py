"""The memory-budget lever on the bundled transformer, for real: re-partitioned at each budget in a
worker process, results stored in the session; and the config patch restores what it changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.queries.summary import summarize
from compiler_core.session import load

ROOT = Path(__file__).resolve().parents[3]


def test_patch_restores_and_rejects_bad_values() -> None:
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from compiler_core.capture.hooks.memory_budget_patch import activation_memory_budget

    before = (functorch_config.activation_memory_budget, functorch_config.enable_autograd_cache,
              inductor_config.fx_graph_cache)  # fmt: skip
    with pytest.raises(RuntimeError), activation_memory_budget(0.25):
        assert functorch_config.activation_memory_budget == 0.25
        assert not functorch_config.enable_autograd_cache and not inductor_config.fx_graph_cache
        raise RuntimeError("boom")
    after = (functorch_config.activation_memory_budget, functorch_config.enable_autograd_cache,
             inductor_config.fx_graph_cache)  # fmt: skip
    assert after == before
    with pytest.raises(ValueError), activation_memory_budget(1.5):
        pass


@pytest.mark.slow
def test_budget_sweep_saves_less_as_budget_drops(tmp_path: Path) -> None:
    out = tmp_path / "budget.json"
    model = str(ROOT / "resources/examples/transformer_block.py")
    cmd = [sys.executable, "-m", "compiler_core", "budget", model,
           "--budgets", "1,0.5,0", "--steps", "1", "-o", str(out)]  # fmt: skip
    proc = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT, capture_output=True,
                          text=True, timeout=900, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    points = load(out).memory_budget
    assert [p.budget for p in points] == [1.0, 0.5, 0.0]
    assert all(not p.error for p in points)
    saved = [p.saved_bytes for p in points]
    assert saved == sorted(saved, reverse=True) and saved[0] > saved[-1]
    recomputed = [p.recomputed for p in points]
    assert recomputed == sorted(recomputed) and recomputed[-1] > recomputed[0]
    assert all(p.step_ms is not None and p.step_ms > 0 for p in points)
    assert points[0].torch_version.startswith("2.")
    assert summarize(load(out))["memory_budget"][0]["budget"] == 1.0


EXITS = """
import os
import torch

model = torch.nn.Linear(8, 4)
example_inputs = (torch.randn(2, 8),)

def train_step(model, inputs):
    model(*inputs).sum().backward()
    os._exit(3)
"""


@pytest.mark.slow
def test_a_worker_that_exits_silently_is_named_with_its_exit_code(tmp_path: Path) -> None:
    """`os._exit(3)` in the train step prints nothing: the CLI said only 'the budget worker
    reported nothing' and a blank line."""
    model = tmp_path / "exits.py"
    model.write_text(EXITS)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "compiler_core", "budget", str(model), "--budgets", "1"],
                          capture_output=True, text=True, env=env, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 1
    assert "exit code 3" in proc.stderr, proc.stderr


FORGES_AND_ESCAPES = """
import json, os, subprocess, sys
import torch

model = torch.nn.Linear(8, 4)
example_inputs = (torch.randn(2, 8),)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True)
with open(os.environ["CS_CHILD_PID"], "w") as f:
    f.write(str(child.pid))

def train_step(model, inputs):
    print("BUDGET " + json.dumps({"budget": 0.123, "saved_bytes": 1, "device": "forged"}), flush=True)
    model(*inputs).sum().backward()
"""


@pytest.mark.slow
def test_budget_runs_in_the_capture_worker_forged_lines_and_escaped_children_do_nothing(
        tmp_path: Path) -> None:
    """The sweep is a worker run like a capture: stdout is only the model's prints (a forged
    `BUDGET` line there is not a point), and a child that left the process group with setsid is
    swept when the run ends instead of keeping the CLI waiting."""
    import time

    from compiler_core.session.codec import save
    from compiler_core.session.model import Session, SessionMeta

    model = tmp_path / "forges.py"
    model.write_text(FORGES_AND_ESCAPES)
    out = tmp_path / "existing.json"
    save(Session(meta=SessionMeta(origin="capture", origin_path=str(model))), out)
    pid_file = tmp_path / "child.pid"
    env = dict(os.environ, PYTHONPATH=str(ROOT), CS_CHILD_PID=str(pid_file))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "compiler_core", "budget", str(model), "--budgets", "1",
                           "--steps", "1", "-o", str(out)], capture_output=True, text=True, env=env,
                          timeout=600, check=False)  # fmt: skip
    assert time.monotonic() - t0 < 250  # not the child's 300 s
    assert proc.returncode == 0, proc.stderr[-2000:]
    session = load(out)
    assert [p.budget for p in session.memory_budget] == [1.0]
    assert session.meta.origin == "capture"  # the existing session kept the rest
    child = int(pid_file.read_text())
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
