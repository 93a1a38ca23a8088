"""Files named on the command line: `-` for a standard stream, and outputs checked before any work.

As with other Unix tools, `-` names standard input where a command reads a log
(`zcat rank0.log.gz | python -m compiler_core summary -`), and `-o -` names standard output
where a command writes one file. The trace reader accepts only regular files: it refuses FIFOs
and devices (trace/read_limits.py) so that it never blocks on one. Standard input is
therefore first copied to a temporary file. That file is named for what it holds (a gzip or xz
stream, a session `.json`, or else a plain log) because the readers choose the decompressor
from the suffix. The session then says `<stdin>` where it would have named that file. `-o -`
writes to a temporary file through the same `save` as any other output, so the same policy
applies (for example, local sources are left out), and then copies the bytes to standard output.

An output path is checked while the arguments are parsed, before an import or a capture has
spent minutes on work it could not store. Its folder must already exist, because a typo in a
folder name is a mistake to report and creating that folder would hide it. The path must not be
a folder, and must not lie under /proc, /sys or /dev: writes are atomic (a temporary file beside
the target, then a rename) and cannot work there. Each failure raises `UsageError`, which
the top-level `main` prints as one line before it exits with status 2.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from compiler_core.trace.read_limits import is_pseudo_path

if TYPE_CHECKING:
    from compiler_core.session import Session

STREAM = "-"
STDIN_NAME = "<stdin>"  # what a session read from standard input names as its log

_GZIP_MAGIC = b"\x1f\x8b"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_SNIFF = 64 << 10


class UsageError(Exception):
    """A command line that cannot work, said in one line before any work starts (exit 2).

    Deliberately not a ValueError: argparse would catch one from an argument type and print
    its usage text above the message."""


def output_file(text: str) -> str:
    """argparse type of an output only a file on disk can take (a worker process writes it, or
    the command reads it back): `-` is refused."""
    if text == STREAM:
        raise UsageError("-o - (standard output) is accepted by `import` only; this command needs a "
                         "file name")
    return _checked_output(text)


def output_file_or_stdout(text: str) -> str:
    """argparse type of an output that may be standard output (`-`)."""
    return text if text == STREAM else _checked_output(text)


def _checked_output(text: str) -> str:
    if not text:  # an optional output left out ("" is its default)
        return text
    real = os.path.realpath(text)
    if is_pseudo_path(real):
        raise UsageError(f"cannot write {text}: /proc, /sys and /dev take no files (for standard output "
                         "use -o - where a command accepts it)")
    if os.path.isdir(real):
        raise UsageError(f"cannot write {text}: it is a folder")
    folder = os.path.dirname(real)
    nearest = folder
    while not os.path.exists(nearest):
        nearest = os.path.dirname(nearest)
    if not os.path.isdir(nearest):
        raise UsageError(f"cannot write {text}: {nearest} is a file, not a folder")
    if nearest != folder:
        raise UsageError(f"cannot write {text}: folder {folder} does not exist (folders are not created)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {text}: no permission to write in {folder}")
    return text


@contextmanager
def readable(path: str) -> Iterator[str]:
    """`path` itself, or for `-` a temporary copy of standard input, deleted on exit."""
    if path != STREAM:
        yield path
        return
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("- reads a trace log from standard input, which is a terminal here: pipe or "
                         "redirect a log into it")
    source = sys.stdin.buffer
    with tempfile.TemporaryDirectory(prefix="compilescope-stdin-") as folder:
        head = source.read(_SNIFF)
        spooled = os.path.join(folder, "stdin" + _suffix(head))
        with open(spooled, "wb") as out:
            out.write(head)
            shutil.copyfileobj(source, out, 1 << 20)
        yield spooled


def _suffix(head: bytes) -> str:
    if head.startswith(_GZIP_MAGIC):
        return ".log.gz"
    if head.startswith(_XZ_MAGIC):
        return ".log.xz"
    if head.lstrip().startswith(b"{"):  # a session: trace lines start with a glog prefix
        return ".json"
    return ".log"


def named_stdin(session: Session, spooled: str) -> Session:
    """`session`, read from the copy `spooled`, naming its log `<stdin>`: the copy is gone
    once the command ends, and a saved session must not name it."""
    meta = session.meta
    if meta.origin_path == spooled:
        meta = dataclasses.replace(meta, origin_path=STDIN_NAME)
    diagnostics = tuple(dataclasses.replace(d, path=STDIN_NAME) if d.path == spooled else d
                        for d in session.diagnostics)  # fmt: skip
    return dataclasses.replace(session, meta=meta, diagnostics=diagnostics)


@contextmanager
def writable(path: str) -> Iterator[str]:
    """`path` itself, or for `-` a temporary file whose bytes go to standard output after the
    block ends without raising. A failed write leaves no file and prints nothing there, since
    `save` writes atomically."""
    if path != STREAM:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="compilescope-stdout-") as folder:
        spooled = os.path.join(folder, "stdout")
        yield spooled
        if os.path.exists(spooled):
            sys.stdout.flush()
            with open(spooled, "rb") as written:
                shutil.copyfileobj(written, sys.stdout.buffer, 1 << 20)
            sys.stdout.buffer.flush()
