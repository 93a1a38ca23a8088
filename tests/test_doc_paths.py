"""Every repository file the docs name exists, so a reader who follows a path finds the file.

Sources: README.md, docs/*.md and the module docstrings under compiler_core/ and explorer/.
A path counts when it starts at a top-level folder of the repository (`bench/oracle.py`,
`compiler_core/timeline/step_clock.py`, `docs/img/x.png`) and names a .py, .md, .json, .png or
.sh file. Relative links and images in docs/*.md are resolved from docs/, in README.md from the
root. Package-relative names in docstrings (`analysis/decompositions.py`) are not checked: they are
not repository paths. All missing paths are reported at once, each with the files naming it.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from tests.conftest import ROOT

TOP_LEVEL = ("bench", "compiler_core", "docs", "explorer", "resources", "scripts", "tests")
_EXT = r"(?:py|md|json|png|sh)"
# a path of at least two components, not part of a longer path, URL or file name (`x.json.xz`)
_PATH = re.compile(r"(?<![\w./:-])((?:[\w.-]+/)+[\w.-]+\." + _EXT + r")(?![\w/-]|\.\w)")
# markdown links and images `[..](target)`, and HTML `<img src="target">`
_LINK = re.compile(
    r"\]\(\s*([^)\s#]+\." + _EXT + r")(?:#[^)]*)?\s*\)"
    r"|<img\b[^>]*\bsrc=[\"']([^\"']+\." + _EXT + r")[\"']"
)

# Stale paths that cannot be fixed where they are named, each with the reason; empty while every
# named path resolves.
KNOWN_STALE: set[str] = set()


def _doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _module_docstrings() -> list[tuple[Path, str]]:
    out = []
    for package in ("compiler_core", "explorer"):
        for path in sorted((ROOT / package).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path)))
            if doc:
                out.append((path, doc))
    return out


def _repo_paths(text: str) -> set[str]:
    return {m.group(1) for m in _PATH.finditer(text) if m.group(1).split("/")[0] in TOP_LEVEL}


def _link_paths(text: str, base: str) -> set[str]:
    paths = set()
    for m in _LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            continue
        paths.add(os.path.normpath(os.path.join(base, target)))
    return paths


def named_paths() -> dict[str, set[str]]:
    """Repository-relative path -> the files (relative to the root) that name it."""
    named: dict[str, set[str]] = {}
    sources: list[tuple[Path, set[str]]] = []
    for md in _doc_files():
        text = md.read_text(encoding="utf-8")
        base = "" if md.parent == ROOT else md.parent.relative_to(ROOT).as_posix()
        sources.append((md, _repo_paths(text) | _link_paths(text, base)))
    for py, doc in _module_docstrings():
        sources.append((py, _repo_paths(doc)))
    for source, paths in sources:
        for path in paths:
            named.setdefault(path, set()).add(source.relative_to(ROOT).as_posix())
    return named


def test_the_scan_finds_paths_in_every_kind_of_source() -> None:
    named = named_paths()
    kinds = {"README.md": False, "docs": False, "docstring": False}
    for sources in named.values():
        for s in sources:
            kinds["README.md"] |= s == "README.md"
            kinds["docs"] |= s.startswith("docs/")
            kinds["docstring"] |= s.endswith(".py")
    assert all(kinds.values()), kinds
    assert any(p.startswith("docs/img/") and p.endswith(".png") for p in named)


def test_every_named_path_exists() -> None:
    missing = {
        path: sorted(sources)
        for path, sources in sorted(named_paths().items())
        if path not in KNOWN_STALE and not (ROOT / path).exists()
    }
    assert not missing, "paths named in docs that do not exist:\n" + "\n".join(
        f"  {path}  (named in {', '.join(sources)})" for path, sources in missing.items()
    )
