"""JSON encoding of the session model: plain JSON only, never pickle or eval.

Schemas 2 and 3 (packed.py) store rows by position with shared tables and each link once; schema
1 (one JSON object per dataclass, `to_jsonable`/`from_jsonable` below) still loads. Decoding is
driven by the dataclasses' own type hints, so adding a field with a default keeps older files
loadable. The schema version is checked first and a mismatch is reported in words the user can
act on. Saves are atomic (temp file, fsync, rename) so a crash mid-save never leaves a
half-written session behind, and checked first as a load checks them, so what is written reopens.

orjson parses and writes the 15 MB session of a 32-layer model about 5x faster than the stdlib;
without it (the GPU worker's image) the stdlib writes the same JSON.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import types
import typing
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from compiler_core.session.gc_pause import gc_paused
from compiler_core.session.model import SCHEMA_VERSION, Compile, Session
from compiler_core.session.packed import PACKED_VERSIONS, PackedFormatError, pack, unpack
from compiler_core.session.source_quotes import with_source_origins, without_local_sources

orjson: Any
try:
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is not installed
    orjson = None

T = TypeVar("T")


class SessionFormatError(ValueError):
    """The file is not a session this version can read; the message says why and what to do."""


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type `tp` from JSON data, ignoring unknown dataclass fields."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _from_union(typing.get_args(tp), data)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(data, dict):
            raise SessionFormatError(f"expected an object for {tp.__name__}, got {type(data).__name__}")
        hints = _hints(tp)
        kwargs = {
            f.name: from_jsonable(hints[f.name], data[f.name])
            for f in dataclasses.fields(tp)
            if f.name in data
        }
        return tp(**kwargs)
    if origin is tuple:
        args = typing.get_args(tp)
        item = args[0] if len(args) == 2 and args[1] is Ellipsis else Any
        return tuple(from_jsonable(item, v) for v in data)
    if origin is dict:
        _, val_tp = typing.get_args(tp)
        return {str(k): from_jsonable(val_tp, v) for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(data)
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def _from_union(args: tuple[Any, ...], data: Any) -> Any:
    if data is None:
        return None
    for arg in args:
        if arg is type(None):
            continue
        if arg in (int, str, float, bool) and isinstance(data, arg):
            return data
        if dataclasses.is_dataclass(arg) and isinstance(data, dict):
            return from_jsonable(arg, data)
    non_none = [a for a in args if a is not type(None)]
    return from_jsonable(non_none[0], data)


def session_to_dict(session: Session) -> dict[str, Any]:
    """The current on-disk form (packed, schema `SCHEMA_VERSION`)."""
    return pack(session)


def session_from_dict(data: Any) -> Session:
    if not isinstance(data, dict) or "schema_version" not in data:
        raise SessionFormatError("not a CompileScope session (no schema_version)")
    version = data["schema_version"]
    if not isinstance(version, int):
        raise SessionFormatError(f"schema_version must be an integer, got {version!r:.80}")
    if version > SCHEMA_VERSION:
        raise SessionFormatError(
            f"this session was written by a newer CompileScope (schema {version}; this build reads "
            f"up to {SCHEMA_VERSION}); upgrade CompileScope to open it"
        )
    if version < 1:
        raise SessionFormatError(f"schema {version} is older than any released format")
    # A wrong type stops here with its field path, never reaching Qt.
    from compiler_core.session.validate import validate_as, validate_session  # subclass SessionFormatError

    if version == 1:  # one object per dataclass, links in both directions
        validate_session(data)
        legacy: Session = from_jsonable(Session, data)
        legacy = dataclasses.replace(legacy, schema_version=SCHEMA_VERSION)  # today's form
        return _derived(_runs_from_ids(legacy))
    if version not in PACKED_VERSIONS:
        raise SessionFormatError(f"schema {version} is not one this build knows")
    try:
        session = unpack(data)
    except (PackedFormatError, RecursionError) as exc:
        raise SessionFormatError(f"damaged session: {exc}"[:500]) from exc
    validate_as(Session, session)  # rows are placed by position: check what they built
    if version < 3:
        session = _runs_from_ids(session)
    return _derived(session)


def _runs_from_ids(session: Session) -> Session:
    """Before schema 3 a log's second run was kept apart only by its ids (`0/0#2`): the suffix
    is that compile's run, so an old session shows its runs as a new one does."""
    compiles = tuple(_run_of_id(c) for c in session.compiles)
    if all(a is b for a, b in zip(compiles, session.compiles, strict=True)):
        return session
    return dataclasses.replace(session, compiles=compiles)


def _run_of_id(c: Compile) -> Compile:
    _, sep, tail = c.compile_id.rpartition("#")
    if not sep or not tail.isdigit() or int(tail) < 2 or c.run:
        return c
    return dataclasses.replace(c, run=int(tail) - 1)


def _derived(session: Session) -> Session:
    """What today's builder stores and an older file lacks, where the session alone tells it
    (where each source text came from); free for a current file. Decomposition tables need the
    builder's own code, so a file opened for the user gets them one layer up
    (analysis/saved_sessions.py); the session layer imports nothing above it."""
    return with_source_origins(session)


def dumps_bytes(session: Session, indent: int | None = None) -> bytes:
    with gc_paused():  # packing makes ~100k short-lived lists: collections would walk the session
        data = session_to_dict(session)
    if orjson is not None:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 if indent else 0)
    compact = None if indent else (",", ":")
    return json.dumps(data, indent=indent, ensure_ascii=False, separators=compact).encode()


def dumps(session: Session, indent: int | None = None) -> str:
    return dumps_bytes(session, indent).decode("utf-8")


def loads(text: str | bytes) -> Session:
    """The session as stored. A file saved before decomposition tables were stored decodes
    without them: open a user's file with analysis/saved_sessions.py, which adds them."""
    with gc_paused():
        try:
            data = orjson.loads(text) if orjson is not None else json.loads(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # orjson's error is a ValueError
            raise SessionFormatError(f"not valid JSON: {exc}") from exc
        return session_from_dict(data)


def load(path: str | os.PathLike[str]) -> Session:
    """`loads` of the file at `path`: the session as stored (see `loads`)."""
    return loads(Path(path).read_bytes())


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
    """The encoded session, checked as a load checks it before anything is written: a session the
    app writes always reopens. A value that does not fit its field (a list where a string
    belongs, from a log someone made) was once written, and the file then refused to open.
    Measured on the 17 MB session of a 32-layer Llama training log: 0.5 s on top of 0.1 s."""
    data = dumps_bytes(session)
    from compiler_core.session.validate import validate_as

    try:
        decoded = orjson.loads(data) if orjson is not None else json.loads(data)
        validate_as(Session, unpack(decoded))
    except (SessionFormatError, PackedFormatError, ValueError, TypeError) as exc:
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
