"""Packaging: the wheel carries the examples, runs from any directory, and the viewer needs no torch.

The wheel is built and installed for real (no build isolation: the venv's
setuptools, no network); "no torch" is a fresh interpreter whose import system refuses `torch`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

tomllib = pytest.importorskip("tomllib")  # Python ≥ 3.11

NO_TORCH = (
    "import sys, importlib.abc\n"
    "class NoTorch(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.split('.')[0] in ('torch', 'triton'):\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
    "sys.meta_path.insert(0, NoTorch())\n"
)


def test_listed_packages_are_every_package_on_disk() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for top in ("compiler_core", "explorer")
        for p in (ROOT / top).rglob("__init__.py")
    }
    # resources/ installs as compilescope_resources, each of its data folders listed too
    data = {f"compilescope_resources.{d.name}" for d in (ROOT / "resources").iterdir()
            if d.is_dir() and d.name != "__pycache__"}
    assert listed == on_disk | {"compilescope_resources"} | data


@pytest.mark.slow
def test_wheel_carries_examples_and_finds_them_from_any_directory(tmp_path: Path) -> None:
    # Built from a copy: setuptools builds in the source tree (build/, *.egg-info), which must
    # not litter the checkout the suite runs from.
    src = tmp_path / "src"
    top_level = {".git", ".venv", ".carry", "build", "dist", "bench", "docs", "tests"}

    def skip(folder: str, names: list[str]) -> set[str]:
        here = {n for n in names if n == "__pycache__" or n.endswith((".egg-info", "_cache"))}
        return here | (top_level & set(names) if Path(folder) == ROOT else set())

    shutil.copytree(ROOT, src, ignore=skip)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path / "dist"), str(src)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("compilescope-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("compilescope_resources/examples/transformer_block.py",
                   "compilescope_resources/sessions/transformer_block.json",
                   "compilescope_resources/distributed/ddp_fsdp_job.py",
                   "compiler_core/trace/records.py", "explorer/main_window.py"):
        assert needed in names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("from compiler_core.resource_paths import examples_dir, sessions_dir\n"
            "import explorer.app as app\n"
            "print(examples_dir()); print(sessions_dir()); print(app.example_paths('transformer_block')[0])")
    env = {**os.environ, "PYTHONPATH": str(target), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert all(Path(p).is_relative_to(target) for p in out), out
    assert Path(out[2]).is_file()


def test_viewer_without_torch_opens_a_log_and_says_how_to_capture(tmp_path: Path) -> None:
    log = ROOT / "tests" / "fixtures" / "traces" / "tlparse_simple.log.gz"
    code = NO_TORCH + (
        "from compiler_core.capture_support import capture_unavailable\n"
        "from compiler_core.cli import main\n"
        "print('REASON', capture_unavailable())\n"
        f"rc = main(['summary', {str(log)!r}])\n"
        f"rc2 = main(['capture', {str(ROOT / 'resources/examples/mlp_graph_break.py')!r}, '-o', "
        f"{str(tmp_path / 'x.json')!r}])\n"
        "print('RC', rc, rc2)\n"
        "assert 'torch' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "REASON Capturing a model needs PyTorch" in proc.stdout
    assert "compilescope[capture]" in proc.stderr  # the capture command's error line
    assert proc.stdout.strip().endswith("RC 0 2")
    assert not (tmp_path / "x.json").exists()


def test_capture_extra_asks_for_exactly_the_torch_range_the_hooks_serve() -> None:
    """pip resolves the newest torch the extra allows: it must be one every hook declares it
    serves, and the extra must not refuse one they all serve."""
    from packaging.requirements import Requirement

    from compiler_core.capture.hooks import HOOKS, declared_versions, parse_version

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    spec = next(Requirement(r) for r in extras["capture"] if r.startswith("torch")).specifier
    ranges = [declared_versions(name) for name in HOOKS]
    oldest = max(parse_version(lo) for lo, _ in ranges)  # served by every hook
    newest = min(parse_version(hi) for _, hi in ranges)
    assert f"{oldest[0]}.{oldest[1]}.0" in spec and f"{newest[0]}.{newest[1]}.9" in spec
    assert f"{oldest[0]}.{oldest[1] - 1}.9" not in spec
    assert f"{newest[0]}.{newest[1] + 1}.0" not in spec, "the extra allows a torch no hook is tested on"
