"""Model files that attack the worker protocol or outlive the capture.

Real worker processes running real model files through the CLI (`capture`): a model that calls
`os._exit(0)` after running, closes the event channel, writes fake events to every inherited fd,
starts a `setsid` child or a forked child that sleeps, maps shared memory past the cap, or raises
an exception whose `__str__` raises or whose message is huge. Each is asserted by its outcome
(exit status, first error line, session or not) and by no process of the run surviving.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler_core.cli import main as cli_main
from compiler_core.session import load
from compiler_core.worker import protocol
from compiler_core.worker.client import WorkerClient
from compiler_core.worker.event_auth import Verifier, new_key, signer
from compiler_core.worker.process_sweep import survivors
from compiler_core.worker.protocol import CaptureSpec

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

RUN = """
import torch

def f(x):
    return x.relu() * 2

model = f
example_inputs = (torch.randn(8),)
"""

ModelFile = Callable[[str, str], Path]


def _capture(path: Path, cache: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    os.environ["COMPILESCOPE_CACHE_DIR"] = str(cache)
    try:
        code = cli_main(["capture", str(path), "-o", str(path.with_suffix(".json")), "--input-steps", "0",
                         *extra])  # fmt: skip
    finally:
        del os.environ["COMPILESCOPE_CACHE_DIR"]
    return code, capsys.readouterr().err


def _error_line(err: str) -> str:
    return next(line for line in err.splitlines() if line.startswith("error:"))


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def _not_success(code: int, err: str) -> None:
    assert code != 0, err
    assert "session written to" not in err
    assert "Traceback (most recent call last)" not in err.split("Traceback (user code)")[0]


def test_os_exit_zero_after_running_is_a_failure(model_file: ModelFile, capture_cache: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    path = model_file("exit0", RUN + "\nimport os\nf(torch.randn(8))\nos._exit(0)\n")
    code, err = _capture(path, capture_cache, capsys)
    _not_success(code, err)
    assert "without finishing" in _error_line(err)


def test_closing_the_event_channel_is_a_failure(model_file: ModelFile, capture_cache: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    src = RUN + """
import os
for fd in os.listdir('/proc/self/fd'):
    if int(fd) > 2:
        try:
            os.close(int(fd))
        except OSError:
            pass
"""
    code, err = _capture(model_file("closer", src), capture_cache, capsys)
    _not_success(code, err)


def test_fake_events_on_inherited_fds_are_a_failure(model_file: ModelFile, capture_cache: Path,
                                                    capsys: pytest.CaptureFixture[str],
                                                    tmp_path: Path) -> None:  # fmt: skip
    fake = tmp_path / "elsewhere.json"
    lines = [json.dumps({"kind": "session", "path": str(fake)}), json.dumps({"kind": "done", "exit_code": 0})]
    src = RUN + f"""
import os
LINES = {lines!r}
for fd in range(3, 1024):
    for line in LINES:
        try:
            os.write(fd, (line + "\\n").encode())
        except OSError:
            pass
"""
    code, err = _capture(model_file("forger", src), capture_cache, capsys)
    _not_success(code, err)
    assert "not written by it" in err
    assert not fake.exists()
    # then dying: the CLI reports, it does not crash (no traceback on the fake path)
    code, err = _capture(model_file("forger_dies", src + "os._exit(1)\n"), capture_cache, capsys)
    _not_success(code, err)
    assert str(fake) not in err


@pytest.mark.parametrize("how", ["setsid", "fork"])
def test_children_do_not_outlive_the_capture(model_file: ModelFile, capture_cache: Path, tmp_path: Path,
                                             how: str) -> None:  # fmt: skip
    pid_file = tmp_path / "child.pid"
    if how == "setsid":
        spawn = f"subprocess.Popen(['setsid', 'sh', '-c', 'echo $$ > {pid_file}; exec sleep 300'])"
    else:
        spawn = f"pid = os.fork()\nif pid == 0:\n    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n" \
                "    time.sleep(300)\n    os._exit(0)"
    src = RUN + f"\nimport os, subprocess, time\n{spawn}\nwhile not os.path.exists({str(pid_file)!r}):\n" \
        "    time.sleep(0.02)\ntime.sleep(0.2)\n"
    path = model_file(f"spawn_{how}", src)
    spec = CaptureSpec(model_path=str(path), out_path=str(path.with_suffix(".json")), input_steps=0)
    client = WorkerClient(spec, timeout_s=240, cache_dir=capture_cache)
    client.run()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), f"{how} child {child} outlived the capture"
    assert child in client.swept
    assert survivors(client.token) == []
    assert client.succeeded, client.problems()  # leaving a child behind is not the model's failure


@pytest.mark.usefixtures("torch_fits_the_cap")
def test_shared_mappings_count_against_the_cap(model_file: ModelFile, capture_cache: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """RLIMIT_DATA alone lets a 6 GiB MAP_SHARED mapping through a 2 GiB cap."""
    src = RUN + "\nimport mmap\nbig = mmap.mmap(-1, 6 << 30, flags=mmap.MAP_SHARED)\n"
    code, err = _capture(model_file("shared_map", src), capture_cache, capsys, "--max-memory-mb", "2048")
    assert code == protocol.EXIT_USER_ERROR, err
    assert "memory cap: 2048 MiB" in err and "not covered" in err
    assert "OSError" in err or "MemoryError" in err


@pytest.mark.usefixtures("torch_fits_the_cap")
def test_forked_children_count_against_the_cap_together(model_file: ModelFile, capture_cache: Path,
                                                        tmp_path: Path) -> None:  # fmt: skip
    """Each child stays under its own rlimit (400 MiB); five of them and the worker do not."""
    pids = tmp_path / "kids"
    src = RUN + f"""
import os, time
f(torch.randn(8))
for _ in range(5):
    pid = os.fork()
    if pid == 0:
        open({str(pids)!r}, "a").write(f"{{os.getpid()}}\\n")
        block = b"\\1" * (400 << 20)  # touched, so resident (the five allocate side by side)
        time.sleep(120)
        os._exit(0)
time.sleep(120)
"""
    path = model_file("fork_hogs", src)
    spec = CaptureSpec(model_path=str(path), out_path=str(path.with_suffix(".json")), input_steps=0,
                       max_memory_mb=2048)  # fmt: skip
    client = WorkerClient(spec, timeout_s=240, cache_dir=capture_cache)
    started = time.monotonic()
    client.run()
    assert client.memory_exceeded > 2048 << 20
    assert time.monotonic() - started < 120  # killed, not slept out
    assert not client.succeeded and not client.exit.timed_out  # type: ignore[union-attr]
    assert survivors(client.token) == []
    assert all(not _alive(int(p)) for p in pids.read_text().split())


def test_exception_whose_str_raises_is_the_users_error(
    model_file: ModelFile, capture_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = RUN + "\nclass Nasty(Exception):\n    def __str__(self):\n        raise ValueError('no')\n\n" \
        "raise Nasty()\n"
    code, err = _capture(model_file("nasty_str", src), capture_cache, capsys)
    assert code == protocol.EXIT_USER_ERROR, err
    assert "Nasty" in _error_line(err) and "internal error" not in err


def test_huge_exception_message_is_cut(model_file: ModelFile, capture_cache: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    path = model_file("huge_msg", RUN + "\nraise RuntimeError('x' * (300 << 20))\n")
    code, err = _capture(path, capture_cache, capsys)
    assert code == protocol.EXIT_USER_ERROR
    first = _error_line(err)
    assert first.startswith("error: capture failed in stage 'load': RuntimeError: xxx") and len(first) < 3000
    assert len(err) < 200_000
    session = load(path.with_suffix(".json"))
    assert all(len(d.message) < 100_000 for d in session.diagnostics)


def test_event_lines_verify_only_in_order_and_with_the_key() -> None:
    key = new_key()
    sign, check = signer(key), Verifier(key)
    first, second = sign('{"kind": "hello"}'), sign('{"kind": "done"}')
    assert check.check(first) == '{"kind": "hello"}'
    assert check.check(first) is None  # replayed
    assert check.check(signer(new_key())('{"kind": "done"}')) is None  # wrong key
    assert check.check('{"kind": "done", "exit_code": 0}') is None  # unsigned
    assert check.check(second) == '{"kind": "done"}'
    assert check.forged == 3
