"""The session model round-trips through JSON and refuses what it cannot read."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from compiler_core.session import (
    SCHEMA_VERSION,
    AotInfo,
    Compile,
    Graph,
    GraphBreak,
    InductorOutput,
    Kernel,
    Node,
    Ref,
    SavedTensor,
    Session,
    SessionFormatError,
    SessionMeta,
    SourceLoc,
    StepSample,
    TensorMeta,
    dumps,
    load,
    loads,
    save,
)
from compiler_core.session.model import Decomposition, DecompositionInfo
from tests.conftest import FIXTURES, ROOT
from tests.session_rows import field_index, get_at


def _sample() -> Session:
    loc = SourceLoc("model.py", 12, "forward", "h = torch.relu(x)")
    node = Node(
        "relu", "call_function", "torch.relu", ("x",), (TensorMeta((8, "s0"), "float32", (64, 1)),),
        loc, (loc,), "layers/0", {"seq_nr": "3"},
    )
    graph = Graph("dynamo", (Node("x", "placeholder"), node), "text")
    return Session(
        meta=SessionMeta(torch_version="2.13.0", device="cpu", ranks=(0, 1), train=True),
        sources={"model.py": "import torch\n"},
        compiles=(
            Compile(
                "0/0", rank=0, dynamo_graph=graph, graph_breaks=(GraphBreak("item()", loc),),
                aot=AotInfo(forward=graph, saved_tensors=(SavedTensor("relu", bytes=128),)),
                inductor=(InductorOutput("forward", kernels=(Kernel("k0", "cpp", "forward"),)),),
                decomposition=DecompositionInfo((Decomposition("relu", ("relu",), kernels=("k0",)),),
                                                introduced=("mm",), origin="aot"),
            ),
        ),
        # links are undirected: the builder stores both directions, disk stores each pair once
        links={_SRC: (_DYN,), _DYN: (_SRC,)},
        timeline=(StepSample("eager", 0, 1.5),),
    )


_SRC = Ref.source_line("model.py", 12).encode()
_DYN = Ref.dynamo_node("0/0", "x", 0).encode()


def test_round_trip_preserves_everything(tmp_path: Path) -> None:
    session = _sample()
    path = tmp_path / "s.json"
    save(session, path)
    assert load(path) == session
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION


def test_symbolic_and_concrete_dims_survive() -> None:
    back = loads(dumps(_sample()))
    meta = back.compiles[0].dynamo_graph.nodes[1].outputs[0]  # type: ignore[union-attr]
    assert meta.shape == (8, "s0")


def test_newer_schema_is_refused_with_advice() -> None:
    data = json.loads(dumps(_sample()))
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(SessionFormatError, match="newer CompileScope"):
        loads(json.dumps(data))


@pytest.mark.parametrize("text", ["", "{", "[]", '{"meta": {}}', '{"schema_version": "1"}', "\x80\x81"])
def test_garbage_is_refused_cleanly(text: str) -> None:
    with pytest.raises(SessionFormatError):
        loads(text.encode("latin-1"))


def test_unknown_fields_from_newer_builds_are_ignored() -> None:
    """A newer build appends fields: a row longer than ours reads as ours, its tail ignored."""
    data = json.loads(dumps(_sample()))
    last = dataclasses.fields(Compile)[-1].name
    get_at(data, f"compiles[0].{last}")  # the row padded to its last field
    get_at(data, "compiles")[0].append({"anything": 1})
    got = loads(json.dumps(data)).compiles[0]
    assert got == _sample().compiles[0]


def test_fields_an_older_file_lacks_take_their_defaults() -> None:
    """A row shorter than ours (an older build's, or trailing defaults dropped) ends in defaults."""
    data = json.loads(dumps(_sample()))
    row = get_at(data, "compiles")[0]
    del row[field_index(Compile, "status"):]
    got = loads(json.dumps(data)).compiles[0]
    assert got.status == "ok" and got.dynamo_graph == _sample().compiles[0].dynamo_graph


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_an_older_file_is_refused_with_the_converter_named(version: int) -> None:
    data = json.loads(dumps(_sample()))
    data["schema_version"] = version
    with pytest.raises(SessionFormatError, match=r"older CompileScope.*bench/convert_sessions\.py"):
        loads(json.dumps(data))


def test_each_link_is_stored_once() -> None:
    data = json.loads(dumps(_sample()))
    links = get_at(data, "links")
    assert sum(len(keys) // 2 for _, _, keys in links) == 1


def test_save_is_atomic_when_the_write_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure strikes after the new bytes were written (at fsync), so a save that wrote into
    the file itself would leave it changed; an atomic one leaves the old file and no temp file."""
    path = tmp_path / "s.json"
    save(_sample(), path)
    before = path.read_bytes()

    def boom(_fd: int) -> None:
        raise OSError("disk gone mid-save")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        save(replace(_sample(), meta=SessionMeta(origin_path="the new one")), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


KILL_CHILD = """
import sys
from dataclasses import replace
from compiler_core.session import load, save
from compiler_core.session.model import SessionMeta
session = load(sys.argv[1])
versions = [replace(session, meta=SessionMeta(origin_path=tag)) for tag in ("A", "B")]
print("ready", flush=True)
i = 0
while True:
    save(versions[i % 2], sys.argv[2])
    i += 1
"""


def test_a_save_killed_at_any_moment_leaves_a_whole_session(tmp_path: Path) -> None:
    """kill -9 of a process saving a 1 MB session over and over, at random moments: the file on
    disk always decodes, as one version or the other."""
    path = tmp_path / "s.json"
    rng = random.Random(0)
    for _ in range(6):
        with subprocess.Popen([sys.executable, "-c", KILL_CHILD, str(FIXTURES / "transformer_block.json"),
                               str(path)], stdout=subprocess.PIPE, text=True, cwd=ROOT) as child:  # fmt: skip
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.4))
            child.send_signal(signal.SIGKILL)
            child.wait()
        if path.exists():
            assert load(path).meta.origin_path in ("A", "B")


def test_ref_encoding_round_trips() -> None:
    for ref in (Ref.kernel_line("1/2", "forward", "k0", 7, 3), Ref.source_line("a|b.py", 4)):
        assert Ref.decode(ref.encode()) == ref


def test_a_compressed_session_loads_and_a_bomb_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions are kept as `.json.xz` beside their logs; one that unpacks past the cap is refused
    before it fills memory."""
    import lzma

    from compiler_core.session import codec

    path = tmp_path / "s.json.xz"
    path.write_bytes(lzma.compress(dumps(_sample()).encode()))
    assert load(path) == _sample()
    monkeypatch.setattr(codec, "MAX_UNPACKED", 100)
    with pytest.raises(SessionFormatError, match="unpacks to more than"):
        load(path)
    path.write_bytes(b"not xz")
    with pytest.raises(SessionFormatError, match=r"not a readable \.xz"):
        load(path)
