"""Layering: compiler_core never imports Qt/pyqtgraph/explorer; explorer never imports torch.

Checked two ways: statically (every import statement in each package) and dynamically (a fresh
interpreter imports every module and we look at sys.modules).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

FORBIDDEN = {
    "compiler_core": ("PySide6", "shiboken6", "pyqtgraph", "explorer"),
    "explorer": ("torch", "triton"),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_forbidden_import_statements(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in FORBIDDEN[package]:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, offenders


def _modules(package: str) -> list[str]:
    out = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def _loaded_after_import(modules: list[str]) -> list[str]:
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_all_of_explorer_loads_no_torch() -> None:
    loaded = _loaded_after_import(_modules("explorer"))
    assert not [m for m in loaded if m.split(".")[0] in ("torch", "triton")]


def test_importing_compiler_core_loads_no_qt_and_no_torch() -> None:
    loaded = _loaded_after_import(["compiler_core", "compiler_core.session"])
    assert not [m for m in loaded if m.split(".")[0] in FORBIDDEN["compiler_core"] + ("torch",)]


def test_importing_every_core_module_loads_no_qt() -> None:
    loaded = _loaded_after_import(_modules("compiler_core"))
    assert not [m for m in loaded if m.split(".")[0] in FORBIDDEN["compiler_core"]]
