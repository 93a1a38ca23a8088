"""Every repository file the docs name exists, so a reader who follows a path finds the file.

Sources: README.md, docs/*.md, and the docstrings and comments of the Python files under
compiler_core/, explorer/ and bench/. A path counts when it names a .py, .md, .json, .png or .sh
file in at least two components, and it must exist:

- from the root (`bench/oracle.py`, `compiler_core/timeline/step_clock.py`, `docs/img/x.png`),
- or package-relative (`analysis/kernel_times.py`, `hooks/aot_replay.py`, `scripts/plain_loop.py`
  named in bench/): under compiler_core/ or explorer/, or under a folder that holds the file
  naming it. Paths into other projects (`torch/_dynamo/...`) and placeholders (`bench/NAME.py`,
  `OUT/x.json`) are not checked.

Relative links and images in docs/*.md are resolved from docs/, in README.md from the root. All
missing paths are reported at once, each with the files naming it.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

from tests.conftest import ROOT

TOP_LEVEL = ("bench", "compiler_core", "docs", "explorer", "resources", "scripts", "tests")
PACKAGES = ("compiler_core", "explorer")
CODE_SOURCES = ("compiler_core", "explorer", "bench")
# first components of paths into other projects, named in comments and docs as places in their code
EXTERNAL = frozenset({"torch", "transformers", "triton", "torchvision", "torchaudio", "timm",
                      "diffusers", "pytorch", "site-packages", "tlparse", "networkx", "_inductor",
                      "_dynamo", "functorch"})
_EXT = r"(?:py|md|json|png|sh)"
# a path of at least two components, not part of a longer path, URL or file name (`x.json.xz`)
_PATH = re.compile(r"(?<![\w./:-])((?:[\w.-]+/)+[\w.-]+\." + _EXT + r")(?![\w/-]|\.\w)")
# markdown links and images `[..](target)`, and HTML `<img src="target">`
_LINK = re.compile(
    r"\]\(\s*([^)\s#]+\." + _EXT + r")(?:#[^)]*)?\s*\)"
    r"|<img\b[^>]*\bsrc=[\"']([^\"']+\." + _EXT + r")[\"']"
)
# a placeholder component: NAME, OUT, E, DIR, N, ... (a real file or folder here is never all capitals)
_PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*|\.\.\.|.*[*<>{}$].*)$")

# Stale paths that cannot be fixed where they are named, each with the reason; empty while every
# named path resolves.
KNOWN_STALE: set[str] = set()


def _doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _code_texts(path: Path) -> list[str]:
    """The docstrings (module, class, function) and comments of one Python file."""
    source = path.read_text(encoding="utf-8")
    texts = [doc for node in ast.walk(ast.parse(source, str(path)))
             if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
             and (doc := ast.get_docstring(node))]
    texts += [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
              if tok.type == tokenize.COMMENT]
    return texts


def _code_files() -> list[Path]:
    return [p for package in CODE_SOURCES for p in sorted((ROOT / package).rglob("*.py"))
            if "__pycache__" not in p.parts]


def _is_placeholder(path: str) -> bool:
    *folders, name = path.split("/")
    return any(_PLACEHOLDER.match(part) for part in [*folders, name.rsplit(".", 1)[0]])


def _named(text: str) -> set[str]:
    return {path for m in _PATH.finditer(text)
            if not _is_placeholder(path := m.group(1)) and path.split("/")[0] not in EXTERNAL}


def _link_paths(text: str, base: str) -> set[str]:
    paths = set()
    for m in _LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            continue
        paths.add(os.path.normpath(os.path.join(base, target)))
    return paths


def resolves(path: str, named_in: str) -> bool:
    """A root path exists from the root; a package-relative one under a package or a folder
    holding the file that names it (`scripts/x.py` named in bench/ is bench/scripts/x.py)."""
    if (ROOT / path).exists():
        return True
    bases = [ROOT / package for package in PACKAGES]
    bases += [ROOT / parent for parent in Path(named_in).parents]
    return any((base / path).exists() for base in bases)


def named_paths() -> dict[str, set[str]]:
    """Path -> the files (relative to the root) that name it."""
    named: dict[str, set[str]] = {}
    sources: list[tuple[Path, set[str]]] = []
    for md in _doc_files():
        text = md.read_text(encoding="utf-8")
        base = "" if md.parent == ROOT else md.parent.relative_to(ROOT).as_posix()
        sources.append((md, _named(text) | _link_paths(text, base)))
    for py in _code_files():
        sources.append((py, set().union(*map(_named, _code_texts(py)))))
    for source, paths in sources:
        for path in paths:
            named.setdefault(path, set()).add(source.relative_to(ROOT).as_posix())
    return named


def test_the_scan_finds_paths_in_every_kind_of_source() -> None:
    named = named_paths()
    kinds = {"README.md": False, "docs": False, "compiler_core": False, "explorer": False,
             "bench": False, "package-relative": False}
    for path, sources in named.items():
        kinds["package-relative"] |= path.split("/")[0] not in TOP_LEVEL
        for s in sources:
            kinds["README.md"] |= s == "README.md"
            for folder in ("docs", *CODE_SOURCES):
                kinds[folder] |= s.startswith(folder + "/")
    assert all(kinds.values()), kinds
    assert any(p.startswith("docs/img/") and p.endswith(".png") for p in named)


def test_comments_count_as_well_as_docstrings() -> None:
    texts = _code_texts(ROOT / "tests" / "test_doc_paths.py")
    assert any("paths into other projects" in t for t in texts)  # a comment of this file


def test_placeholders_and_other_projects_are_not_paths() -> None:
    text = "bench/NAME.py OUT/x.json torch/_dynamo/eval_frame.py transformers/.../m.py bench/oracle.py"
    assert _named(text) == {"bench/oracle.py"}


def test_package_relative_names_resolve_under_a_package_or_the_naming_folder() -> None:
    assert resolves("timeline/stack_chunk.py", "docs/benchmarks.md")
    assert resolves("scripts/plain_loop.py", "bench/timeline_truth.py")
    assert not resolves("timeline/no_such_module.py", "docs/benchmarks.md")


def test_every_named_path_exists() -> None:
    missing = {
        path: sorted(sources)
        for path, sources in sorted(named_paths().items())
        if path not in KNOWN_STALE and not any(resolves(path, s) for s in sources)
    }
    assert not missing, "paths named in docs, docstrings or comments that do not exist:\n" + "\n".join(
        f"  {path}  (named in {', '.join(sources)})" for path, sources in missing.items()
    )
