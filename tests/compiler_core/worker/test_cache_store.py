"""The cache folder stays under its cap, oldest files first, and clears on request."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler_core.worker.cache_store import cap_bytes, clear, trim, usage
from compiler_core.worker.protocol import worker_env


def _file(path: Path, size: int, age_s: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    t = 1_700_000_000 - age_s
    os.utime(path, (t, t))
    return path


def test_trim_deletes_oldest_files_down_to_eighty_percent_of_the_cap(tmp_path: Path) -> None:
    old = [_file(tmp_path / "inductor" / "a" / f"old{i}.so", 1000, 1000 + i) for i in range(6)]
    new = [_file(tmp_path / "inductor" / "b" / f"new{i}.so", 1000, i) for i in range(4)]
    assert usage(tmp_path, 10_000).bytes == 10_000
    freed = trim(tmp_path, cap=9_000)
    assert freed == 3_000 and usage(tmp_path).bytes == 7_000  # 7,000 <= 0.8 * 9,000
    assert all(p.exists() for p in new)
    gone = [p.name for p in old if not p.exists()]
    assert sorted(gone) == ["old3.so", "old4.so", "old5.so"]  # the three oldest


def test_under_the_cap_or_without_a_cap_nothing_is_deleted(tmp_path: Path) -> None:
    files = [_file(tmp_path / f"f{i}", 100, i) for i in range(3)]
    assert trim(tmp_path, cap=1_000) == 0 and trim(tmp_path, cap=0) == 0
    assert all(p.exists() for p in files)


def test_cap_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_MAX_MB", "3")
    assert cap_bytes() == 3 * 1024 * 1024
    monkeypatch.setenv("COMPILESCOPE_CACHE_MAX_MB", "lots")
    assert cap_bytes() == 2048 * 1024 * 1024


def test_clear_empties_the_folder_and_the_worker_env_recreates_what_it_needs(tmp_path: Path) -> None:
    _file(tmp_path / "inductor" / "x" / "k.so", 500, 0)
    _file(tmp_path / "tmp" / "t", 100, 0)
    assert clear(tmp_path) == 600 and list(tmp_path.iterdir()) == []
    env = worker_env({}, tmp_path)
    assert Path(env["TORCHINDUCTOR_CACHE_DIR"]).is_dir() and Path(env["TMPDIR"]).is_dir()


def test_worker_env_trims_before_a_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPILESCOPE_CACHE_MAX_MB", "1")
    big = _file(tmp_path / "inductor" / "old.bin", 2 * 1024 * 1024, 100)
    worker_env({}, tmp_path)
    assert not big.exists()


def test_cli_shows_and_clears_the_cache(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    _file(tmp_path / "inductor" / "k.so", 4096, 0)
    env = {**os.environ, "COMPILESCOPE_CACHE_DIR": str(tmp_path), "COMPILESCOPE_CACHE_MAX_MB": "64"}
    shown = subprocess.run([sys.executable, "-m", "compiler_core", "cache", "--json"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert json.loads(shown.stdout) == {"path": str(tmp_path), "files": 1, "bytes": 4096,
                                        "cap_bytes": 64 * 2**20}
    cleared = subprocess.run([sys.executable, "-m", "compiler_core", "cache", "--clear"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert cleared.returncode == 0 and "4096" not in cleared.stderr
    assert cleared.stdout.startswith(f"cleared {tmp_path}") and list(tmp_path.iterdir()) == []
