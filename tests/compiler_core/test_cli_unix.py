"""The CLI behaves as a Unix tool: `--version`, quiet on a closed pipe, `-` for stdin and stdout,
one-line errors with exit status 2 for outputs it cannot write and for folders without a log, and
one sentence on how to install torch for every command that needs it.

Each test runs `python -m compiler_core` in a real subprocess on the small tlparse fixture log.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

import compiler_core
from compiler_core.session import loads
from tests.conftest import EXAMPLES, ROOT

tomllib = pytest.importorskip("tomllib")  # Python ≥ 3.11

LOG = ROOT / "tests" / "fixtures" / "traces" / "tlparse_simple.log.gz"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CLI = [sys.executable, "-m", "compiler_core"]
Done = subprocess.CompletedProcess[bytes]


def cli(*args: str, cwd: Path | None = None, stdin: bytes | None = None) -> Done:
    return subprocess.run([*CLI, *args], cwd=cwd or ROOT, env=ENV, input=stdin, capture_output=True,
                          timeout=120)  # fmt: skip


def one_error_line(done: Done) -> str:
    """The single line on stderr, asserted to be an error line and not a traceback."""
    lines = done.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr.decode()
    return lines[0]


def test_version_is_the_package_version() -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.decode().strip() == f"compilescope {compiler_core.__version__}"


def test_gui_entry_answers_version_without_loading_qt() -> None:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['main.py', '--version']\n"
        "try:\n"
        "    runpy.run_path('main.py', run_name='__main__')\n"
        "except SystemExit as done:\n"
        "    print('EXIT', done.code)\n"
        "print('QT', sorted(m for m in sys.modules if m.startswith(('PySide6', 'explorer'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.stdout.splitlines() == [f"compilescope {compiler_core.__version__}", "EXIT 0", "QT []"]


def test_console_script_runs_the_module_main() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["compilescope-cli"] == "compiler_core.cli:main"
    # what pip's generated `compilescope-cli` wrapper does: argv[0] is the script, then main()
    code = ("import sys; sys.argv[0] = 'compilescope-cli'\n"
            "from compiler_core.cli import main; raise SystemExit(main())")
    done = subprocess.run([sys.executable, "-c", code, "-h"], env=ENV, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.startswith("usage: compilescope-cli")


@pytest.mark.parametrize("args", [["summary", str(LOG)], ["import", str(LOG), "-o", "-"]],
                         ids=["summary", "import-to-stdout"])  # fmt: skip
def test_a_closed_pipe_ends_quietly(args: list[str]) -> None:
    with subprocess.Popen([*CLI, *args], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as proc:  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first byte: `| head -0`
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 141  # as a shell reports a tool that SIGPIPE ended
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_shell_pipe_into_head_shows_no_error() -> None:
    done = subprocess.run(f"{sys.executable} -m compiler_core summary {LOG} | head -c 1",
                          shell=True, cwd=ROOT, env=ENV, capture_output=True, timeout=120)  # fmt: skip
    assert done.stdout == b"{"
    assert done.stderr == b""


def test_summary_reads_a_log_from_stdin_compressed_or_not() -> None:
    from_file = cli("summary", str(LOG))
    assert from_file.returncode == 0
    for data in (LOG.read_bytes(), gzip.decompress(LOG.read_bytes())):
        from_stdin = cli("summary", "-", stdin=data)
        assert from_stdin.returncode == 0, from_stdin.stderr
        assert from_stdin.stdout == from_file.stdout


def test_import_to_stdout_writes_only_the_session_there(tmp_path: Path) -> None:
    done = cli("import", "-", "-o", "-", cwd=tmp_path, stdin=LOG.read_bytes())
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []  # no file named `-`, no spooled copy left behind
    session = loads(done.stdout)
    assert len(session.compiles) == 1
    assert session.meta.origin_path == "<stdin>"  # not the temporary copy, which is gone
    assert b"wrote the session to standard output" in done.stderr
    # the session on stdout reads back through `summary -` as the log itself does
    assert cli("summary", "-", stdin=done.stdout).stdout == cli("summary", str(LOG)).stdout


def test_text_on_stdin_is_refused_as_no_log() -> None:
    done = cli("summary", "-", stdin=b"hello\n")
    assert done.returncode == 2
    assert one_error_line(done).startswith("error: <stdin>: not a TORCH_TRACE log")


def _unwritable(tmp_path: Path, kind: str) -> Path:
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return {
        "pseudo": Path("/proc/compilescope-out.json"),
        "under-a-file": a_file / "under" / "out.json",
        "missing-folder": tmp_path / "missing" / "dir" / "out.json",
        "a-folder": tmp_path,
    }[kind]


@pytest.mark.parametrize("kind", ["pseudo", "under-a-file", "missing-folder", "a-folder"])
def test_an_unwritable_output_is_one_line_and_exit_2(tmp_path: Path, kind: str) -> None:
    out = _unwritable(tmp_path, kind)
    done = cli("import", str(LOG), "-o", str(out))
    assert done.returncode == 2
    assert one_error_line(done).startswith(f"error: cannot write {out}: ")
    assert not (tmp_path / "missing").exists()  # no folder is created for an output


def test_capture_checks_its_output_before_starting(tmp_path: Path) -> None:
    model = str(EXAMPLES / "small_cnn.py")
    missing = cli("capture", model, "-o", str(tmp_path / "missing" / "s.json"))
    assert missing.returncode == 2
    assert "does not exist (folders are not created)" in one_error_line(missing)
    to_stdout = cli("capture", model, "-o", "-", cwd=tmp_path)
    assert to_stdout.returncode == 2
    assert "accepted by `import` only" in one_error_line(to_stdout)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["summary", "import"])
def test_a_folder_without_a_log_is_an_error(tmp_path: Path, command: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not a log\n")
    (other / "model.py").write_text("import torch\n")
    for folder in (empty, other):
        extra = ["-o", str(tmp_path / "s.json")] if command == "import" else []
        done = cli(command, str(folder), *extra)
        assert done.returncode == 2
        assert str(folder) in one_error_line(done)
        assert done.stdout == b""
        assert not (tmp_path / "s.json").exists()


def test_a_folder_whose_rank_log_holds_no_trace_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "dedicated_log_torch_trace_rank_0.log").write_text("hello\n")
    done = cli("summary", str(tmp_path))
    assert done.returncode == 2
    assert "not a TORCH_TRACE log" in one_error_line(done)


@pytest.mark.parametrize("command", ["budget", "capture", "run"])
def test_every_torch_command_says_how_to_install_torch(tmp_path: Path, command: str) -> None:
    # torch hidden from this interpreter only: the check must come before any worker starts
    code = ("import sys; sys.modules['torch'] = None\n"
            "from compiler_core.cli import main\n"
            "sys.exit(main(sys.argv[1:]))")  # fmt: skip
    out = tmp_path / "s.json"
    argv = [sys.executable, "-c", code, command, str(EXAMPLES / "small_cnn.py"), "-o", str(out)]
    done = subprocess.run(argv, cwd=tmp_path, env=ENV, capture_output=True, timeout=120)
    assert done.returncode == 2
    line = one_error_line(done)
    assert "needs PyTorch" in line and "pip install 'compilescope[capture]'" in line
    assert not out.exists()
