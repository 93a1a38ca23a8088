"""The session file: plain JSON only, never pickle or eval; one layout (packed.py), one version.

A file is written from the model's dataclasses and read back through the structs wire.py derives
from the same dataclasses, so the encoder, the decoder and the type check that stands between a
file and the GUI all follow one description per type. The version is read first and a file of
another version is refused in words the user can act on: a session saved by an older CompileScope
opens after `python bench/convert_sessions.py FILE` (the converter keeps the older readers and
the tables an older file lacks, so loading never runs builder code). Saves are atomic (temp file,
fsync, rename) so a crash mid-save never leaves a half-written session behind, and checked first
as a load checks them, so what is written reopens.

msgspec parses, checks and writes the JSON in C: the 18 MB session of a 32-layer Llama reads in
a fraction of the time a parse to builtins followed by a Python type check took.
"""

from __future__ import annotations

import lzma
import os
import tempfile
from pathlib import Path

import msgspec

from compiler_core.session.gc_pause import gc_paused
from compiler_core.session.model import SCHEMA_VERSION, Session
from compiler_core.session.packed import check, pack, stored_version, unpack
from compiler_core.session.source_quotes import without_local_sources
from compiler_core.session.wire import BadValueError

CONVERT = "python bench/convert_sessions.py FILE"  # the converter of older files, as the user runs it


class SessionFormatError(ValueError):
    """The file is not a session this version can read; the message says why and what to do."""


class SessionValidationError(SessionFormatError):
    """A value of the file does not fit its field; `path` names it (`compiles[0].compile_id`)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'session'}: {problem}")
        self.path = path
        self.problem = problem


def session_from_bytes(data: bytes | str) -> Session:
    """The session in an encoded file, every value checked against its field's type."""
    version = stored_version(data)
    if version is None:
        raise SessionFormatError("not a CompileScope session (no schema_version)")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SessionFormatError(f"schema_version must be an integer, got {version!r:.80}")
    if version > SCHEMA_VERSION:
        raise SessionFormatError(
            f"this session was written by a newer CompileScope (schema {version}; this build reads "
            f"{SCHEMA_VERSION}); upgrade CompileScope to open it"
        )
    if version < SCHEMA_VERSION:
        raise SessionFormatError(
            f"this session was saved by an older CompileScope (schema {version}; this build reads "
            f"{SCHEMA_VERSION}); convert it with `{CONVERT}`, which writes FILE in today's form"
        )
    try:
        return unpack(data)
    except BadValueError as exc:
        raise SessionValidationError(exc.path, exc.problem) from None


_ENCODER = msgspec.json.Encoder()


def dumps_bytes(session: Session, indent: int | None = None) -> bytes:
    with gc_paused():  # packing makes ~100k short-lived lists: collections would walk the session
        data = _ENCODER.encode(pack(session))
    return msgspec.json.format(data, indent=indent) if indent else data


def dumps(session: Session, indent: int | None = None) -> str:
    return dumps_bytes(session, indent).decode("utf-8")


def loads(text: str | bytes) -> Session:
    """The session as stored; `SessionFormatError` says why a file is refused."""
    with gc_paused():
        try:
            return session_from_bytes(text)
        except msgspec.DecodeError as exc:
            raise SessionFormatError(f"not valid JSON: {exc}") from exc
        except RecursionError as exc:  # msgspec's own depth limit, reached by a hostile file
            raise SessionFormatError(f"damaged session: {exc}"[:500]) from exc


SESSION_SUFFIXES = (".json", ".json.xz")  # .xz: how sessions are kept beside their logs in a repo
MAX_UNPACKED = 2**30  # a compressed session is refused past this, not unpacked into all memory


def load(path: str | os.PathLike[str]) -> Session:
    """`loads` of the file at `path` (`.json`, or `.json.xz`): the session as stored."""
    raw = Path(path).read_bytes()
    if str(path).endswith(".xz"):
        unpacker = lzma.LZMADecompressor()
        try:
            raw = unpacker.decompress(raw, max_length=MAX_UNPACKED)
        except lzma.LZMAError as exc:
            raise SessionFormatError(f"not a readable .xz file: {exc}") from exc
        if not unpacker.eof:
            raise SessionFormatError(f"unpacks to more than {MAX_UNPACKED >> 20} MiB: not a session")
    return loads(raw)


def save(session: Session, path: str | os.PathLike[str], *, include_sources: bool = False) -> None:
    """Write atomically: a crash leaves either the old file or the new one, never half of one.

    Source files read from this machine for a log made elsewhere (`SourceOrigin.LOOKUP`) stay
    out unless `include_sources`: the file keeps the lines the log quotes instead, so sharing a
    session never shares a local file the user did not choose to share."""
    if not include_sources:
        session = without_local_sources(session, "read from the machine that imported the log; not saved")
    atomic_write_bytes(Path(path), reopenable_bytes(session))


class UnreopenableSessionError(SessionFormatError):
    """The session's encoded form would not load; nothing was written (the old file is intact)."""


def reopenable_bytes(session: Session) -> bytes:
    """The encoded session, type-checked as a load checks it before anything is written: a session
    the app writes always reopens. A value that does not fit its field (a list where a string
    belongs, from a log someone made) was once written, and the file then refused to open."""
    data = dumps_bytes(session)
    try:
        with gc_paused():
            check(data)
    except (BadValueError, RecursionError) as exc:
        raise UnreopenableSessionError(f"not written: this session would not reopen ({exc})"[:600]) from exc
    return data


def atomic_write_text(path: Path, text: str, *, make_parent: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), make_parent=make_parent)


def atomic_write_bytes(path: Path, data: bytes, *, make_parent: bool = True) -> None:
    """Temp file beside `path`, fsync, rename, fsync the folder. `make_parent=False` for paths
    built from data (compiler_core/safe_paths.py): those are one component inside a folder the
    user chose, so there is never a folder to create, and creating one would be a bug."""
    if make_parent:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
