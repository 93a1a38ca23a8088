"""The one launcher (compiler_core/worker/launch.py): every kind of run is built from one spec,
its events file is tailed with bounded memory, and a `setsid` child of the user's code is gone
when a CLI `run` (one rank or two) or a budget sweep ends. Real CLI processes, real workers."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler_core.run.spec import ScriptSpec
from compiler_core.worker import launch, process_sweep
from compiler_core.worker.memory_limit import limit_bytes
from compiler_core.worker.protocol import CaptureSpec
from tests.conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = FIXTURES / "scripts"


@pytest.mark.parametrize("kind", ["capture", "script", "ranks", "budget"])
def test_every_run_is_built_from_one_spec(tmp_path: Path, kind: str) -> None:
    model = tmp_path / "m.py"
    model.write_text("")
    spec: CaptureSpec
    if kind in ("script", "ranks"):
        spec = ScriptSpec(str(model), str(tmp_path / "s.json"), cwd=str(tmp_path / "work"),
                          nproc=2 if kind == "ranks" else 1, max_memory_mb=512)  # fmt: skip
    else:
        spec = CaptureSpec(str(model), str(tmp_path / "s.json"), budgets="1,0.5" if kind == "budget" else "")
    key = b"k" * 32
    built = launch.LaunchSpec.build(spec, key, cache_dir=tmp_path / "cache", env={"PATH": os.environ["PATH"]})
    try:
        argv = list(built.argv)
        assert argv[argv.index("--events-file") + 1] == built.events_path and "--auth-stdin" in argv
        assert "--events-fd" not in argv  # one channel kind for every launch
        assert stat.S_IMODE(os.stat(os.path.dirname(built.events_path)).st_mode) == 0o700
        env = built.environ
        assert env[process_sweep.RUN_TOKEN_ENV] == built.token
        assert env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)
        assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "cache" / "inductor")
        assert built.memory_cap == limit_bytes(spec.device, spec.max_memory_mb)
        assert built.cwd == (str(tmp_path / "work") if isinstance(spec, ScriptSpec) else str(tmp_path))
        assert built.key_line() == key.hex().encode() + b"\n" and key.hex() not in repr(built)
        assert key.hex() not in " ".join(argv) and key.hex() not in str(env)
    finally:
        built.remove_channel()
    assert not os.path.exists(os.path.dirname(built.events_path))


def test_the_tail_keeps_memory_bounded_and_a_long_line_fails_its_signature(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    with events.open("wb") as handle:
        handle.write(b"first\n" + b"x" * (3 * launch.MAX_LINE_BYTES) + b"\nsecond\nthird-unterminated")
    tail = launch.EventTail(str(events))
    seen: list[str] = []
    while True:
        got = tail.read(2**20)  # small reads: the over-long line spans many of them
        assert len(tail._partial) <= launch.MAX_LINE_BYTES
        if not got and tail._offset == events.stat().st_size:
            break
        seen += got
    seen += tail.read_rest()
    assert seen[0] == "first" and seen[2:] == ["second", "third-unterminated"]
    assert len(seen[1]) == launch.MAX_LINE_BYTES and set(seen[1]) == {"x"}  # cut, passed on once


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _assert_gone(pid_files: list[Path]) -> None:
    for pid_file in pid_files:
        child = int(pid_file.read_text())
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), f"the setsid child {child} ({pid_file.name}) outlived the run"


def _cli(*args: str, cwd: Path, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COMPILESCOPE_CACHE_DIR=str(cwd / "cache"), **env_extra)
    return subprocess.run([sys.executable, "-m", "compiler_core", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=500, check=False)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("nproc", [1, 2])
def test_a_setsid_child_is_gone_after_a_cli_run(tmp_path: Path, nproc: int) -> None:
    """`compiler_core run`: the CLI process is the subreaper and sweeps by the run token, for one
    rank and for torchrun's ranks alike; it returns long before the child's 300 s."""
    prefix = tmp_path / "child.pid"
    t0 = time.monotonic()
    proc = _cli("run", "-q", "--nproc", str(nproc), "-o", str(tmp_path / "s.json"),
                str(SCRIPTS / "leaves_setsid_child.py"), "--", str(prefix), cwd=tmp_path)  # fmt: skip
    assert time.monotonic() - t0 < 250
    assert proc.returncode == 0, proc.stderr[-3000:]
    _assert_gone([Path(f"{prefix}.{rank}") for rank in range(nproc)])


BUDGET_MODEL = """
import os, subprocess, time
import torch

model = torch.nn.Linear(8, 4)
example_inputs = (torch.randn(2, 8),)
pid_file = os.environ["CS_CHILD_PID"]
subprocess.Popen(["setsid", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 300"])
while not os.path.exists(pid_file):
    time.sleep(0.02)

def train_step(model, inputs):
    model(*inputs).sum().backward()
"""


@pytest.mark.slow
def test_a_setsid_child_is_gone_after_a_budget_sweep(tmp_path: Path) -> None:
    model = tmp_path / "budget_model.py"
    model.write_text(BUDGET_MODEL)
    pid_file = tmp_path / "child.pid"
    t0 = time.monotonic()
    proc = _cli("budget", str(model), "--budgets", "1", "--steps", "1", "--json", cwd=tmp_path,
                CS_CHILD_PID=str(pid_file))
    assert time.monotonic() - t0 < 250
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"budget": 1.0' in proc.stdout
    _assert_gone([pid_file])
