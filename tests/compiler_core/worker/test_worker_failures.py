"""Failing model files end with a clear error, the right exit info and, where something was
traced first, a partial session. Real worker processes, real compiles of tiny models."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler_core.cli import main as cli_main
from compiler_core.worker import protocol
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.protocol import CaptureSpec

pytestmark = pytest.mark.slow

TINY = """
import torch

def f(x):
    return x.relu() * 2

model = f
example_inputs = (torch.randn(8),)
"""

ModelFile = Callable[[str, str], Path]


def _client(path: Path, cache: Path, timeout: float | None = None) -> WorkerClient:
    spec = CaptureSpec(model_path=str(path), out_path=str(path.with_suffix(".json")))
    return WorkerClient(spec, timeout_s=timeout, cache_dir=cache)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state  # a zombie nobody reaped is dead too


def _wait_for_pid(path: Path, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def test_raise_at_import_names_load_stage_and_user_frame(model_file: ModelFile, capture_cache: Path) -> None:
    path = model_file("bad_import", "import torch\n\nraise RuntimeError('bad import 42')\n")
    client = _client(path, capture_cache)
    exit_info = client.run()
    assert exit_info.returncode == protocol.EXIT_USER_ERROR and exit_info.signal is None
    assert client.error is not None and client.error.stage == "load"
    assert "RuntimeError: bad import 42" in client.error.message
    assert f'File "{path}", line 3' in client.error.traceback
    assert "compiler_core" not in client.error.traceback  # user frames only
    session = client.recover_session()
    assert session is not None and session.compiles == ()
    assert any("bad import 42" in d.message for d in session.diagnostics if d.severity == "error")


def test_raise_in_forward_keeps_what_was_compiled(model_file: ModelFile, capture_cache: Path) -> None:
    path = model_file("fwd_raise", TINY + """
def train_step(model, inputs):
    model(*inputs)
    raise ValueError("loss went sideways: 7")
""")
    client = _client(path, capture_cache)
    exit_info = client.run()
    assert exit_info.returncode == protocol.EXIT_USER_ERROR
    assert client.error is not None and client.error.stage == "run"
    assert "ValueError: loss went sideways: 7" in client.error.message
    session = client.recover_session()
    assert session is not None and client.session_path  # saved by the worker itself
    (compiled,) = session.compiles
    assert compiled.inductor and compiled.inductor[0].kernels
    assert any("loss went sideways" in d.message for d in session.diagnostics)


def test_segfault_rebuilds_partial_session_from_trace(model_file: ModelFile, capture_cache: Path) -> None:
    path = model_file("segv", TINY + """
import os, signal

def train_step(model, inputs):
    model(*inputs)
    os.kill(os.getpid(), signal.SIGSEGV)
""")
    client = _client(path, capture_cache)
    exit_info = client.run()
    assert exit_info.signal == signal.SIGSEGV and not exit_info.ok
    assert client.last_stage == "run"
    assert "Segmentation fault" in client.stderr_tail  # faulthandler's report
    session = client.recover_session()
    assert session is not None and not client.session_path
    assert len(session.compiles) == 1 and session.compiles[0].dynamo_graph is not None
    assert any("SIGSEGV" in d.message for d in session.diagnostics)
    assert Path(client.spec.out_path).is_file()


def test_cancel_kills_hung_model_and_its_children_within_2s(model_file: ModelFile, capture_cache: Path,
                                                             tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    path = model_file("hang", TINY + f"""
import subprocess

def train_step(model, inputs):
    model(*inputs)
    child = subprocess.Popen(["sleep", "300"])
    open({str(pid_file)!r}, "w").write(str(child.pid))
    while True:
        pass
""")
    client = _client(path, capture_cache, timeout=120)  # a safety net; the test cancels
    client.start()
    events = client.events()
    for event in events:
        if event.kind == "stage" and event.stage == "inductor" and event.state == "finished":
            break
    child = _wait_for_pid(pid_file)
    assert _alive(child)
    started = time.monotonic()
    client.cancel()
    for _ in events:
        pass
    assert time.monotonic() - started < 2.0
    assert client.exit is not None and client.exit.cancelled and not client.exit.ok
    assert not _alive(child)
    session = client.recover_session()
    assert session is not None and len(session.compiles) == 1


def test_timeout_via_cli(model_file: ModelFile, capture_cache: Path, capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(capture_cache))
    path = model_file("hang_import", "import torch\nwhile True:\n    pass\n")
    started = time.monotonic()
    code = cli_main(["capture", str(path), "-o", str(path.with_suffix(".json")), "--timeout", "3", "-q"])
    elapsed = time.monotonic() - started
    assert code == 124
    assert 3 <= elapsed < 3 + 2 + 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("error: capture timed out after 3 s in stage 'load'")


def test_megabytes_of_stdout_neither_block_nor_fake(model_file: ModelFile, capture_cache: Path) -> None:
    path = model_file("chatty", TINY + """
import sys

def train_step(model, inputs):
    for _ in range(50):
        sys.stdout.write("x" * 100_000 + "\\n")
        print('{"kind": "done", "exit_code": 99}')  # looks like an event; must not be taken for one
    model(*inputs)
""")
    client = _client(path, capture_cache)
    exit_info = client.run()
    assert exit_info.ok, client.error
    assert client.stdout_bytes > 5_000_000
    done = [e for e in client.received if e.kind == "done"]
    assert [e.exit_code for e in done] == [0]
    session = client.recover_session()
    assert session is not None and len(session.compiles) == 1


def test_sys_exit_is_a_clear_failure(
    model_file: ModelFile, capture_cache: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(capture_cache))
    path = model_file("exits", TINY + """
import sys

def train_step(model, inputs):
    sys.exit(3)
""")
    code = cli_main(["capture", str(path), "-o", str(path.with_suffix(".json")), "-q"])
    assert code == protocol.EXIT_USER_ERROR
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "error: capture failed in stage 'run': SystemExit: the model file called sys.exit(3)"
    line = path.read_text().splitlines().index("    sys.exit(3)") + 1
    assert any(f'File "{path}", line {line}' in text for text in err)


def test_children_left_running_are_killed_with_the_worker(model_file: ModelFile, capture_cache: Path,
                                                          tmp_path: Path) -> None:
    pid_file = tmp_path / "orphan.pid"
    path = model_file("spawns", TINY + f"""
import subprocess
_child = subprocess.Popen(["sleep", "300"])
open({str(pid_file)!r}, "w").write(str(_child.pid))
""")
    client = _client(path, capture_cache)
    assert client.run().ok, client.error
    assert not _alive(_wait_for_pid(pid_file, timeout=1))


def test_unsupported_device_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                     capture_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(capture_cache))
    example = Path(__file__).resolve().parents[3] / "resources" / "examples" / "triton_add_relu.py"
    code = cli_main(["capture", str(example), "-o", str(tmp_path / "t.json"), "--device", "cpu", "-q"])
    assert code == protocol.EXIT_UNSUPPORTED_DEVICE
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("error: capture failed in stage 'load': UnsupportedDeviceError:")
    assert "needs device 'cuda'" in first and "'cpu'" in first


def test_worker_is_started_in_its_own_process_group(model_file: ModelFile, capture_cache: Path) -> None:
    path = model_file("plain", TINY)
    client = _client(path, capture_cache)
    client.start()
    assert client.proc is not None
    assert os.getpgid(client.proc.pid) == client.proc.pid != os.getpgid(0)
    assert client.run().ok


@pytest.mark.usefixtures("torch_fits_the_cap")
def test_allocating_past_the_memory_cap_is_a_clear_out_of_memory_error(
    model_file: ModelFile, capture_cache: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """8 GiB of ones under a 3 GiB cap: the allocation fails inside the worker, the machine
    never swaps, and the user's line is named."""
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(capture_cache))
    path = model_file("oom", TINY + """
def train_step(model, inputs):
    big = torch.ones(2 * 2**30)  # 8 GiB of float32, in eager so the compiler cannot elide it
    return model(*inputs) * big[0]
""")
    out = str(path.with_suffix(".json"))
    code = cli_main(["capture", str(path), "-o", out, "--max-memory-mb", "3072", "-q"])
    assert code == protocol.EXIT_USER_ERROR
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("error: capture failed in stage"), first
    assert "alloc" in first.lower() or "memory" in first.lower(), first
    assert "big = torch.ones" in err  # the user's own line, from their traceback


@pytest.mark.gpu
def test_a_cuda_out_of_memory_is_a_clear_error_and_keeps_what_was_recorded(
    model_file: ModelFile, capture_cache: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The model compiles on the GPU, then its training step asks for 4 TiB: torch raises
    OutOfMemoryError in the worker; the first line names it, the user's line follows, and the
    compile recorded before it is kept."""
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(capture_cache))
    path = model_file("cuda_oom", """
import torch
model = torch.nn.Linear(8, 8).cuda()
example_inputs = (torch.randn(4, 8, device="cuda"),)
compile_options = {}

def train_step(model, inputs):
    out = model(*inputs)
    huge = torch.empty(2**40, device="cuda")  # 4 TiB of float32: no GPU has it
    return out.sum() + huge[0]
""")
    out = path.with_suffix(".json")
    code = cli_main(["capture", str(path), "-o", str(out), "--device", "cuda", "-q"])
    assert code == protocol.EXIT_USER_ERROR
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("error: capture failed in stage"), first
    assert "OutOfMemoryError" in first or "out of memory" in first.lower(), first
    assert "huge = torch.empty" in err
    from compiler_core.session import load

    session = load(out)
    assert any(c.dynamo_graph is not None for c in session.compiles), "the compile before the OOM is kept"


def test_a_cap_too_small_for_torch_says_so(model_file: ModelFile, capture_cache: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Under 300 MiB of address space the loader cannot map torch's libraries: a usage error
    that names the cap and the way out, not "internal error"."""
    monkeypatch.setenv("COMPILESCOPE_CACHE_DIR", str(capture_cache))
    path = model_file("tiny_cap", TINY)
    out = str(path.with_suffix(".json"))
    code = cli_main(["capture", str(path), "-o", out, "--max-memory-mb", "300", "-q"])
    err = capsys.readouterr().err
    assert code == protocol.EXIT_USAGE, err
    assert "could not be loaded under the memory cap (300 MiB)" in err and "--max-memory-mb" in err
    assert "internal error" not in err
