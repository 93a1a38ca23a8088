"""A log that names files of this machine never makes the app read them.

tlparse's real simple.log (one compile of a `test_torchinductor.py` module) with its file renamed,
as an attacker would: to a 0600 file of the user's, to `/proc/self/environ`, to a symlink planted
beside the log that leads out of the lookup roots, to a 0600 `.py` file beside the log named only
by `co_filename`. The quoted lines are made to match the secret file exactly, so only the
lookup's own rules stand between the log and the secret. Every `open` of the process is
recorded with an audit hook (`sys.addaudithook`: os.open and open() both raise it), so "nothing
read" is checked on the syscall's way in, not inferred from the session alone.
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from compiler_core.analysis import import_trace
from compiler_core.analysis.source_lookup import SourceLookup
from compiler_core.session import Session, SourceOrigin, dumps
from tests.conftest import FIXTURES

SIMPLE = FIXTURES / "traces" / "tlparse_simple.log.gz"
LOGGED = "/data/users/xmfan/a/pytorch/test/inductor/test_torchinductor.py"
# the log's three quoted lines, and what the attacker makes them quote instead: the secret's lines
QUOTES = [":11119 in helper, code: out = F.gelu(x)", ":11120 in helper, code: out = self.in_layers(out)",
          ":11125 in forward, code: out = torch.ops.test.baz(out)"]  # fmt: skip
SECRET = ["TOKEN = 'sk-live-9f8e7d6c5b4a'", "PASSWORD = 'hunter2-correct-horse'", "KEY = 'AKIA0000SECRET'"]
UNQUOTED = "PRIVATE = 'only-in-the-file-7a1'"  # the secret file's fourth line: no log quotes it

_opened: list[str] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and _opened is not None and isinstance(args[0], str | bytes):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)  # process-wide and permanent: it records only inside `opened_files`


@contextmanager
def opened_files() -> Iterator[list[str]]:
    global _opened
    seen: list[str] = []
    _opened = seen
    try:
        yield seen
    finally:
        _opened = None


def _log(folder: Path, name: str, *, co_filename: str | None = None, quote_secret: bool = True) -> Path:
    """simple.log naming `name` wherever it named its test file (or `co_filename` there only)."""
    text = gzip.decompress(SIMPLE.read_bytes()).decode()
    if co_filename is not None:
        text = text.replace(f'"co_filename": "{LOGGED}"', f'"co_filename": "{co_filename}"')
    if quote_secret:
        for quote, line in zip(QUOTES, SECRET, strict=True):
            number = SECRET.index(line) + 1
            text = text.replace(LOGGED + quote, f"{LOGGED}:{number} in forward, code: {line}")
    path = folder / "trace.log"
    path.write_text(text.replace(LOGGED, name))
    return path


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A 0600 file of the user's, outside any lookup root, holding exactly the lines the log quotes."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    path = home / "secrets.py"
    path.write_text("\n".join([*SECRET, UNQUOTED]) + "\n")
    path.chmod(0o600)
    return path


def _leaks(session: Session) -> list[str]:
    """What of the secret file reached the session, in memory or as saved: a text read from
    disk, or the line only the file holds."""
    out = [p for p, o in session.source_origins.items() if o != SourceOrigin.QUOTE]
    return out + (["the unquoted line"] if "only-in-the-file" in dumps(session, indent=1) else [])


def _roots(log: Path) -> SourceLookup:
    return SourceLookup.for_log(str(log))


@pytest.mark.parametrize("lookup", [False, True], ids=["lookup-off", "lookup-on"])
def test_a_log_naming_a_private_file_outside_the_roots_never_reads_it(
    tmp_path: Path, secret: Path, lookup: bool,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    log = _log(logs, str(secret))
    with opened_files() as seen:
        session = import_trace(log, lookup=_roots(log) if lookup else None)
    assert str(secret) not in seen and os.path.realpath(secret) not in seen, seen
    assert session.source_origins == {str(secret): SourceOrigin.QUOTE}
    # what is shown is the log's own text: the three lines it quotes, at their numbers
    assert session.sources[str(secret)] == "\n".join(SECRET) + "\n"
    assert not _leaks(session)


@pytest.mark.parametrize("lookup", [False, True], ids=["lookup-off", "lookup-on"])
def test_proc_self_environ_is_never_opened(tmp_path: Path, lookup: bool) -> None:
    log = _log(tmp_path, "/proc/self/environ")
    os.environ["COMPILESCOPE_TEST_CANARY"] = "canary-3f1c"
    try:
        with opened_files() as seen:
            session = import_trace(log, lookup=_roots(log) if lookup else None)
    finally:
        del os.environ["COMPILESCOPE_TEST_CANARY"]
    assert not [p for p in seen if p.startswith(("/proc", "/sys", "/dev"))], seen
    assert "canary-3f1c" not in dumps(session)
    assert session.source_origins == {"/proc/self/environ": SourceOrigin.QUOTE}
    # even a capture's own trusted lookup refuses /proc (a path no run imports code from)
    with opened_files() as seen:
        import_trace(log, lookup=SourceLookup.capture())
    assert not [p for p in seen if p.startswith("/proc")], seen


def test_a_symlink_beside_the_log_leading_out_of_the_roots_is_refused(tmp_path: Path, secret: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    link = logs / "model.py"
    link.symlink_to(secret)  # inside the log's folder by name, outside it in fact
    log = _log(logs, str(link))
    with opened_files() as seen:
        session = import_trace(log, lookup=_roots(log))
    assert not {str(link), str(secret), os.path.realpath(link)} & set(seen), seen
    assert session.source_origins == {str(link): SourceOrigin.QUOTE}
    assert "lookup roots" in session.source_notes[str(link)]
    assert not _leaks(session)


def test_a_private_file_named_only_by_co_filename_is_never_opened(tmp_path: Path) -> None:
    """A file the log quotes no line of has nothing to be checked against: it is never opened,
    even beside the log with the lookup on (no quoted line is not "100 % agreement")."""
    logs = tmp_path / "logs"
    logs.mkdir()
    private = logs / "notes.py"
    private.write_text("API_KEY = 'do-not-read'\n" * 40)
    private.chmod(0o600)
    log = _log(logs, "/nowhere/model.py", co_filename=str(private), quote_secret=False)
    before = private.stat()
    with opened_files() as seen:
        session = import_trace(log, lookup=_roots(log))
    assert str(private) not in seen, seen
    assert str(private) not in session.sources and "do-not-read" not in dumps(session)
    assert private.stat().st_atime_ns == before.st_atime_ns  # (where the filesystem keeps atime)


def test_a_fifo_named_like_a_source_file_never_blocks(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    fifo = logs / "model.py"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    log = _log(logs, str(fifo))
    session = import_trace(log, lookup=_roots(log))  # returns: O_NONBLOCK, then fstat refuses it
    assert session.source_origins == {str(fifo): SourceOrigin.QUOTE}


def test_one_true_line_is_not_enough(tmp_path: Path) -> None:
    """A `.py` file beside the log (under a root, lookup on) whose single quoted line is true is
    not taken as the log's file: it is opened to check, never stored or shown."""
    logs = tmp_path / "logs"
    logs.mkdir()
    private = logs / "settings.py"
    private.write_text(SECRET[0] + "\n" + "\n".join(f"LINE_{i} = {i}" for i in range(50)) + "\n")
    text = gzip.decompress(SIMPLE.read_bytes()).decode()
    text = text.replace(LOGGED + QUOTES[0], f"{LOGGED}:1 in forward, code: {SECRET[0]}")
    for quote in QUOTES[1:]:  # the log's other quotes name the same file, at lines it lacks
        text = text.replace(LOGGED + quote, LOGGED + quote.replace(":1112", ":9912"))
    log = logs / "trace.log"
    log.write_text(text.replace(LOGGED, str(private)))
    session = import_trace(log, lookup=_roots(log))
    assert session.source_origins == {str(private): SourceOrigin.QUOTE}
    assert "LINE_" not in session.sources[str(private)]
    assert "1 of 4 quoted lines match" in session.source_notes[str(private)]


def test_a_file_over_the_size_bound_is_not_read(tmp_path: Path) -> None:
    """A matching `.py` file beside the log, padded past 2 MB (a log pointing at a huge file):
    refused after the fstat, before any byte is read into the session."""
    logs = tmp_path / "logs"
    logs.mkdir()
    big = logs / "model.py"
    big.write_text("\n".join(SECRET) + "\n" + "# pad\n" * 500_000)  # 3 MB, the quotes at 1-3
    log = _log(logs, str(big))
    session = import_trace(log, lookup=_roots(log))
    assert session.source_origins == {str(big): SourceOrigin.QUOTE}
    assert session.source_notes[str(big)].startswith("no readable file at this path")  # never compared
    big.write_text("\n".join(SECRET) + "\n" + "# pad\n" * 100)  # the same file, small: read and compared
    assert "3 of 4 quoted lines match" in import_trace(log, lookup=_roots(log)).source_notes[str(big)]
