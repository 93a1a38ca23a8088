"""Readable deep graphs: module-path coverage and cost, folds and first-view size on real logs.

Run: `.venv/bin/python bench/readable_graphs.py [--json] [--log NAME]` (NAME from bench/data,
default hf_llama_train). Imports the log, then reports per stage the share of call nodes with a
module path, the time `with_module_paths` takes for the compile, the folded blocks and the items
the first view shows (Qt-free layout, the same code the canvas runs). With --json the last line
is `{"figures": [...]}`.
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler_core.analysis import import_trace  # noqa: E402
from compiler_core.analysis.module_paths import call_node_coverage, with_module_paths  # noqa: E402
from compiler_core.session import Compile, Graph  # noqa: E402
from explorer.layout import CompoundLayout, build_groups, from_sections  # noqa: E402

FIGURES: list[dict[str, object]] = []


def figure(name: str, value: float, unit: str, target: float | None, higher_is_better: bool = False) -> None:
    ok = None if target is None else (value >= target if higher_is_better else value <= target)
    FIGURES.append({"name": name, "value": round(value, 4), "unit": unit, "target": target, "ok": ok})
    print(f"{name}: {value:.4g} {unit} (target {target})")


def _strip(g: Graph | None) -> Graph | None:
    return None if g is None else replace(g, nodes=tuple(replace(n, module_path="") for n in g.nodes))


def _without_paths(c: Compile) -> Compile:
    aot = c.aot
    if aot is not None:
        aot = replace(aot, joint=_strip(aot.joint), forward=_strip(aot.forward),
                      backward=_strip(aot.backward), inference=_strip(aot.inference))  # fmt: skip
    outs = tuple(replace(o, post_grad=_strip(o.post_grad), pre_grad=_strip(o.pre_grad)) for o in c.inductor)
    return replace(c, dynamo_graph=_strip(c.dynamo_graph), aot=aot, inductor=outs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--log", default="hf_llama_train")
    args = ap.parse_args()
    log = Path(tempfile.mkdtemp()) / f"{args.log}.log"
    with lzma.open(ROOT / "bench" / "data" / f"{args.log}.log.xz") as src, log.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    t = time.perf_counter()
    session = import_trace(log)
    figure("import_s", time.perf_counter() - t, "s", None)
    c = max(session.compiles, key=lambda c: len(c.dynamo_graph.nodes) if c.dynamo_graph else 0)
    bare = _without_paths(c)  # derive from scratch, as the builder does
    t = time.perf_counter()
    with_module_paths(bare)
    figure("module_paths_s", time.perf_counter() - t, "s", 1.0)
    stages = [("dynamo", c.dynamo_graph)]
    if c.aot is not None:
        stages += [("joint", c.aot.joint), ("forward", c.aot.forward), ("backward", c.aot.backward)]
    stages += [(f"post_grad_{o.graph}", o.post_grad) for o in c.inductor]
    for name, g in stages:
        if g is None:
            continue
        figure(f"{name}_module_coverage", call_node_coverage(g), "share", 0.95, higher_is_better=True)
        a = from_sections([(g, name)])
        t = time.perf_counter()
        tree = build_groups(a)
        scene = CompoundLayout(a, tree).scene(tree.default_expanded(300))
        figure(f"{name}_first_view_s", time.perf_counter() - t, "s", None)
        figure(f"{name}_first_view_items", float(scene.visible.sum()), "items", 300)
        biggest = max((int(tree.label[f].rsplit("× ", 1)[1]) for f in tree.fold), default=0)
        figure(f"{name}_largest_fold", biggest, "copies", None)
    if args.json:
        print(json.dumps({"figures": FIGURES}))


if __name__ == "__main__":
    main()
