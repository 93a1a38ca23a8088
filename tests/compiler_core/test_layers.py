"""compiler_core's layer order, enforced per package: an import only ever points down.

Every import counts: module-level, inside a function (a deferred import is still a dependency,
it only moves the cost), under `TYPE_CHECKING`, and `from compiler_core import x` forms. A
package may import its own modules and any package of a lower or the same layer; never one of
a higher layer, and the packages never import each other in a cycle. `explorer/` sits above all
of it and is never imported by the core (test_import_contract.py checks that too, at run time).

Adding a package means giving it a row here: an unlisted one fails the test, so its place is a
decision, not an accident.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

CORE = ROOT / "compiler_core"
PACKAGE_ROOT = "compiler_core"  # `compiler_core/__init__.py`: the version and nothing else

# Lowest first. Packages of one row may import each other (none does today); the order of rows
# is the order of the pipeline, records → facts → lookups → live runs → clients → commands.
LAYERS: tuple[tuple[str, ...], ...] = (
    (PACKAGE_ROOT, "session", "resource_paths", "capture_support"),  # the model; stdlib helpers
    ("safe_paths",),  # every file written from a name in data (uses the codec's atomic write)
    ("trace",),  # TORCH_TRACE reading, FX text
    ("analysis",),  # records → a session's facts, the stage artifacts read, old files completed
    ("export",),  # files that run: kernels, repros, timeline CSV / Chrome trace
    ("ranks",),  # what differs between ranks; one trace for all ranks (writes through export)
    ("queries",),  # torch-free lookups the views show; `summary` gathers the ranks' facts too
    ("overview",),  # the Overview's facts, verdict and HTML report
    ("modelfile",),  # the user's model file, loaded in the worker only
    ("capture",),  # a live compile recorded; `capture/hooks/` is the torch seam
    ("timeline",),  # step times measured live (drives capture's compile hooks)
    ("worker",),  # the subprocess, its protocol, its jobs (capture, timeline, budget sweep)
    ("run",),  # the user's own script under the recording: a worker job and its client
    ("stages",),  # the memory-budget sweep's client half (its spec is the worker's)
    ("diff",),  # two sessions compared; a hint applied and re-run (runs captures and scripts)
    ("cli", "__main__"),  # the commands
)
ABOVE_ALL = ("explorer",)  # never imported by the core

RANK = {unit: i for i, row in enumerate(LAYERS) for unit in row}


def _unit_of(parts: list[str], core: Path) -> str:
    """The layer unit of a dotted module path inside compiler_core (`["compiler_core", "queries",
    "summary"]` → "queries"; the package root itself → PACKAGE_ROOT)."""
    if len(parts) < 2:
        return PACKAGE_ROOT
    name = parts[1]
    if (core / name).is_dir() or (core / f"{name}.py").is_file():
        return name
    return PACKAGE_ROOT  # a name defined in compiler_core/__init__.py (`__version__`)


def _targets(node: ast.Import | ast.ImportFrom, here: list[str], is_package: bool) -> Iterator[str]:
    """The dotted modules an import statement names: relative imports resolved, and each name of
    `from compiler_core import a, b` taken as a possible unit."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        base = here if is_package else here[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    if module == PACKAGE_ROOT:
        yield from (f"{module}.{alias.name}" for alias in node.names)
    else:
        yield module


def import_edges(core: Path = CORE) -> list[tuple[str, str, str]]:
    """(from unit, to unit, "file:line: the import") for every import between two units."""
    edges = []
    for path in sorted(core.rglob("*.py")):
        parts = list(path.relative_to(core.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        here = parts[:-1] if is_package else parts
        source = _unit_of(here, core)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            where = f"{path.relative_to(core.parent)}:{node.lineno}: {ast.unparse(node)}"
            seen: set[str] = set()
            for target in _targets(node, here, is_package):
                top = target.split(".")
                if top[0] in ABOVE_ALL:
                    unit = top[0]
                elif top[0] == PACKAGE_ROOT:
                    unit = _unit_of(top, core)
                else:
                    continue
                if unit != source and unit not in seen:
                    seen.add(unit)
                    edges.append((source, unit, where))
    return edges


def units() -> set[str]:
    found = {p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    found |= {p.stem for p in CORE.glob("*.py") if p.stem != "__init__"}
    return found | {PACKAGE_ROOT}


def violations(edges: list[tuple[str, str, str]]) -> list[str]:
    out = []
    for source, target, where in edges:
        if target in ABOVE_ALL:
            out.append(f"{where}  ({source} imports {target}, which the core never imports)")
        elif source in RANK and target in RANK and RANK[target] > RANK[source]:
            out.append(f"{where}  ({source} is below {target} in LAYERS: imports only point down)")
    return out


def cycles(edges: list[tuple[str, str, str]]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for source, target, _ in edges:
        graph.setdefault(source, set()).add(target)
    found, state = [], dict.fromkeys(graph, 0)  # 0 new, 1 on the path, 2 done

    def visit(unit: str, path: list[str]) -> None:
        state[unit] = 1
        for nxt in sorted(graph.get(unit, ())):
            if state.get(nxt, 0) == 1:
                found.append([*path[path.index(nxt):], nxt])
            elif state.get(nxt, 0) == 0:
                visit(nxt, [*path, nxt])
        state[unit] = 2

    for unit in sorted(graph):
        if state[unit] == 0:
            visit(unit, [unit])
    return found


def test_every_package_has_a_layer() -> None:
    missing = sorted(units() - set(RANK))
    assert not missing, f"give these a row in LAYERS (tests/compiler_core/test_layers.py): {missing}"
    stale = sorted(set(RANK) - units())
    assert not stale, f"LAYERS names what compiler_core no longer has: {stale}"


def test_imports_only_point_down() -> None:
    bad = violations(import_edges())
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_packages_import_each_other_in_no_cycle() -> None:
    edges = import_edges()
    found = cycles(edges)
    lines = []
    for cycle in found:
        lines.append(" -> ".join(cycle))
        for a, b in itertools.pairwise(cycle):
            lines.extend([f"    {where}" for s, t, where in edges if (s, t) == (a, b)][:3])
    assert not found, "import cycles between packages:\n" + "\n".join(lines)


def test_the_check_sees_deferred_and_package_form_imports(tmp_path: Path) -> None:
    """The walker itself: a function-level import and `from compiler_core import x` are edges."""
    core = tmp_path / "compiler_core"
    (core / "session").mkdir(parents=True)
    (core / "queries").mkdir()
    for init in (core, core / "session", core / "queries"):
        (init / "__init__.py").write_text("")
    (core / "session" / "codec.py").write_text(
        "def load():\n    from compiler_core.queries import summary\n\nfrom compiler_core import queries\n")
    edges = {(s, t) for s, t, _ in import_edges(core)}
    assert edges == {("session", "queries")}
