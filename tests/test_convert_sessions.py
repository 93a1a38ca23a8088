"""Sessions saved by older builds open after bench/convert_sessions.py, with what they lacked.

The app reads one layout; the converter keeps the readers of schemas 1 to 3. The older files here
are made the way those builds wrote them: schema 1 as one object per dataclass with both link
directions, schema 3 as today's rows under a `fields` header naming their order.
"""

from __future__ import annotations

import dataclasses
import json
import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from compiler_core.session import SCHEMA_VERSION, SessionFormatError, dumps, load
from compiler_core.session.model import Session
from tests.bench_scripts import BENCH
from tests.compiler_core.test_session_codec import _sample
from tests.conftest import FIXTURES
from tests.session_rows import as_packed_of, get_at


def _schema_1(session: Session) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(session)
    data["schema_version"] = 1
    return data


def _schema_3(session: Session) -> dict[str, Any]:
    return as_packed_of(3, json.loads(dumps(session)))


def _convert(tmp_path: Path, data: dict[str, Any], name: str = "old.json") -> Path:
    path = tmp_path / name
    raw = json.dumps(data).encode()
    path.write_bytes(lzma.compress(raw) if name.endswith(".xz") else raw)
    done = subprocess.run([sys.executable, str(BENCH / "convert_sessions.py"), str(path)],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"-> {SCHEMA_VERSION}" in done.stdout
    return path


def test_an_older_file_is_refused_until_converted_then_reads_as_saved(tmp_path: Path) -> None:
    for make, name in ((_schema_1, "one.json"), (_schema_3, "three.json.xz")):
        data = make(_sample())
        plain = tmp_path / f"plain_{name}".removesuffix(".xz")
        plain.write_text(json.dumps(data))
        with pytest.raises(SessionFormatError, match="convert_sessions"):
            load(plain)
        path = _convert(tmp_path, data, name)
        if name.endswith(".xz"):
            path.with_suffix("").write_bytes(lzma.decompress(path.read_bytes()))
            path = path.with_suffix("")
        got = load(path)
        assert got.compiles == _sample().compiles and got.links == _sample().links
        assert got.schema_version == SCHEMA_VERSION


def test_an_older_row_order_is_read_through_its_own_header(tmp_path: Path) -> None:
    """Schema 3 named each class's fields: a file whose Compile rows held a field in another place
    (or one this build lacks) still converts to the right fields."""
    data = _schema_3(_sample())
    order = data["fields"]["Compile"]
    get_at(data, f"compiles[0].{order[-1]}")  # the row padded to every field
    row = get_at(data, "compiles")[0]
    status = order.index("status")
    row.insert(1, row.pop(status))
    order.insert(1, order.pop(status))
    order.insert(0, "gone_field")
    row.insert(0, {"whatever": 1})
    got = load(_convert(tmp_path, data))
    assert got.compiles == _sample().compiles


def test_a_converted_schema_2_file_gets_its_runs_from_ids(tmp_path: Path) -> None:
    session = _sample()
    second = dataclasses.replace(session.compiles[0], compile_id="0/0#2")
    data = _schema_3(dataclasses.replace(session, compiles=(*session.compiles, second)))
    data["schema_version"] = 2
    got = load(_convert(tmp_path, data))
    assert [c.run for c in got.compiles] == [0, 1]


def test_every_session_kept_in_the_repository_reads() -> None:
    resources = FIXTURES.parent.parent / "resources" / "sessions"
    for path in [*FIXTURES.glob("*.json"), *resources.glob("*.json")]:
        assert load(path).schema_version == SCHEMA_VERSION, path
