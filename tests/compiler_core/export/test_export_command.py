"""`python -m compiler_core export SESSION_OR_LOG -o DIR [--compile ID] [--rank R]`."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from compiler_core.cli import main
from compiler_core.export import export_compiles
from compiler_core.session import load
from tests.conftest import ROOT

MLP = ROOT / "resources" / "sessions" / "mlp_graph_break.json"
DDP = ROOT / "bench" / "corpus" / "logs" / "dist_ddp_train"


def test_all_compiles_at_once_then_one_by_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(MLP), "-o", str(tmp_path / "all")]) == 0
    index = json.loads((tmp_path / "all" / "index.json").read_text())
    assert [c["compile_id"] for c in index["compiles"]] == ["0/0", "1/0"]
    names = {p.name for p in (tmp_path / "all").iterdir()}
    assert {
        "c0_0__graph_repro.py",
        "c1_0__graph_repro.py",
        "c1_0__output_code_inference.py",
        "c1_0__inference__cpp_fused_mul_0.py",
        "INDEX.md",
        "index.json",
    } <= names
    assert "exported 10 files of 2 compile(s)" in capsys.readouterr().out
    assert main(["export", str(MLP), "-o", str(tmp_path / "one"), "--compile", "1/0"]) == 0
    index = json.loads((tmp_path / "one" / "index.json").read_text())
    assert [c["compile_id"] for c in index["compiles"]] == ["1/0"]
    assert (tmp_path / "one" / "inference__cpp_fused_mul_0.py").is_file()


def test_every_rank_of_a_log_folder_or_one_rank(tmp_path: Path) -> None:
    assert main(["export", str(DDP), "-o", str(tmp_path / "all")]) == 0
    ranks = {c["rank"] for c in json.loads((tmp_path / "all" / "index.json").read_text())["compiles"]}
    assert ranks == {0, 1}
    assert main(["export", str(DDP), "-o", str(tmp_path / "r1"), "--rank", "1"]) == 0
    compiles = json.loads((tmp_path / "r1" / "index.json").read_text())["compiles"]
    assert compiles and {c["rank"] for c in compiles} == {1}
    assert all(p.name.startswith(("r1_", "INDEX", "index")) for p in (tmp_path / "r1").iterdir())


def test_bad_outputs_and_unknown_compiles_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(MLP), "-o", str(tmp_path / "no" / "such")]) == 2
    assert "parent folder" in capsys.readouterr().err
    (tmp_path / "f").write_text("")
    assert main(["export", str(MLP), "-o", str(tmp_path / "f")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert main(["export", str(MLP), "-o", str(tmp_path / "x"), "--compile", "9/9"]) == 1
    assert "no compile matches --compile 9/9" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_names_from_the_session_never_become_code(tmp_path: Path) -> None:
    """A kernel named to close a string and run a command stays a comment and a string literal."""
    evil = "x'''\nimport os; os.system('echo pwned')\n#"
    session = load(MLP)
    c = session.compiles[0]
    kernels = tuple(replace(k, name=evil + k.name) for k in c.inductor[0].kernels)
    session = replace(session, compiles=(replace(c, inductor=(replace(c.inductor[0], kernels=kernels),)),))
    files = [p for p in export_compiles(session, tmp_path) if p.suffix == ".py"]
    assert len(files) == 4
    for path in files:
        tree = ast.parse(path.read_text())
        calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
        assert "os.system" not in calls, path.name


def test_the_index_carries_the_profiled_time_of_each_kernel(tmp_path: Path) -> None:
    """A CPU capture with a profiled step: every kernel's µs per step, per mode, in both indexes."""
    session = ROOT / "tests" / "fixtures" / "timeline" / "transformer_cpu_profiled.json"
    assert main(["export", str(session), "-o", str(tmp_path)]) == 0
    (entry,) = json.loads((tmp_path / "index.json").read_text())["compiles"]
    times = {e["kernel"]: e["us_per_step"] for e in entry["kernels"]}
    assert len(times) == 26 and all(set(t) == {"default"} and t["default"] > 0 for t in times.values())
    assert f"| default {times['cpp_fused_gelu_view_3']['default']} |" in (tmp_path / "INDEX.md").read_text()


def test_files_left_by_another_export_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An earlier export's file in the folder would read as this session's: the command says so."""
    assert main(["export", str(MLP), "-o", str(tmp_path / "out")]) == 0
    assert "did not write" not in capsys.readouterr().err  # a fresh folder: nothing foreign
    (tmp_path / "out" / "c9_0__other_model_kernel.py").write_text("print('another session')\n")
    assert main(["export", str(MLP), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "also holds 1 file this export did not write (e.g. c9_0__other_model_kernel.py)" in err
