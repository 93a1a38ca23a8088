"""Where networkx would be the natural tool at run time, measured against what the app does.

On the real H200 log of HF Llama's 32-layer training step (bench/data/hf_llama_train), three
questions the product answers over graphs, each timed both ways (median of `--runs`):

- repeated-block folding: the app's bottom-up signatures and folds of the largest Dynamo graph's
  module tree (`explorer/layout/repeats.py`) against networkx's Weisfeiler-Lehman hash of every
  numbered block's subgraph (what `bench/oracle.py` checks the folds with), and whether both
  find the same runs of identical blocks;
- graph diff: `graph_diff` of the post-grad forward against a copy with its middle node removed
  and every later node renamed (as `bench/diff_speed.py` edits it), against networkx's graph edit
  largest common subgraph (ISMAGS) on the first 10, 20, 40, ... nodes of the same pair, until one
  search passes `--mcs-limit` (the whole graph is out of its reach: the search is exponential;
  its graph edit distance would also need scipy);
- "why is this tensor saved": from every saved tensor, the backward nodes its value reaches and
  one path to the backward's output, by a dict-of-lists walk against an `nx.DiGraph` built from
  the same backward graph (its construction timed apart);

and what `import networkx` costs a fresh interpreter (a viewer would pay it at start-up).

With `--json` the last line is the figures JSON.
"""

from __future__ import annotations

import argparse
import dataclasses as dc
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench_figures import decompressed, figure, report
from oracle import block_hash

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import networkx as nx  # noqa: E402

from compiler_core.analysis import import_trace  # noqa: E402
from compiler_core.diff.graph_diff import graph_diff  # noqa: E402
from compiler_core.session import Graph  # noqa: E402
from explorer.layout import build_groups, from_graph  # noqa: E402

LOG = "hf_llama_train"


def _import_s(module: str) -> float:
    """What importing `module` costs a fresh interpreter (`-X importtime`, cumulative, s)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"],
                         capture_output=True, text=True, check=True).stderr  # fmt: skip
    last = [line for line in out.splitlines() if line.rstrip().endswith(f"| {module}")][-1]
    return int(last.split("|")[1]) / 1e6


def _median(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _edited(g: Graph) -> Graph:
    """`g` without its middle node and every later node renamed (`add_7` → `add_7_e`)."""
    nodes = list(g.nodes)
    mid = len(nodes) // 2
    gone = nodes[mid].name
    new = {n.name: n.name + "_e" for n in nodes[mid + 1 :] if n.op != "output"}
    out = [dc.replace(n, name=new.get(n.name, n.name),
                      inputs=tuple(new.get(i, i) for i in n.inputs if i != gone))
           for n in nodes[:mid] + nodes[mid + 1 :]]  # fmt: skip
    return dc.replace(g, nodes=tuple(out))


def _digraph(g: Graph) -> nx.DiGraph:
    dg = nx.DiGraph()
    for n in g.nodes:
        dg.add_node(n.name, label=f"{n.op}:{n.target}")
        dg.add_edges_from((i, n.name) for i in n.inputs)
    return dg


def _wl_runs(g: Graph, tree: Any) -> tuple[int, int]:
    """Runs of identical numbered blocks by WL hash (2 or more, adjacent indices), and how many
    of them the app folded."""
    blocks: dict[str, dict[int, list[Any]]] = {}
    for n in g.nodes:
        parts = [p for p in (n.module_path or "").split("/") if p]
        for depth, part in enumerate(parts):
            if part.isdigit():
                blocks.setdefault("/".join(parts[:depth]), {}).setdefault(int(part), []).append(n)
    runs = 0
    for by_index in blocks.values():
        hashes = {}
        for i, members in by_index.items():
            hashes[i] = block_hash(members)
        run = 1
        for i in sorted(hashes)[1:]:
            if hashes[i] == hashes.get(i - 1):
                run += 1
                continue
            runs += run >= 2
            run = 1
        runs += run >= 2
    return runs, len(tree.fold)


def _reach_plain(bw: Graph, saved: list[Any]) -> int:
    users: dict[str, list[str]] = {}
    for n in bw.nodes:
        for i in n.inputs:
            users.setdefault(i, []).append(n.name)
    out = next(n.name for n in bw.nodes if n.op == "output")
    found = 0
    for st in saved:
        parent = {st.name: ""}
        todo = deque([st.name])
        while todo:
            x = todo.popleft()
            for u in users.get(x, ()):
                if u not in parent:
                    parent[u] = x
                    todo.append(u)
        found += out in parent  # the path: follow `parent` back from the output
    return found


def _reach_nx(bw: Graph, saved: list[Any]) -> int:
    dg = _digraph(bw)
    out = next(n.name for n in bw.nodes if n.op == "output")
    found = 0
    for st in saved:  # one traversal per tensor, as the dict walk: every reached node's path
        found += out in nx.single_source_shortest_path(dg, st.name)
    return found


def _mcs(a: Graph, b: Graph) -> int:
    """networkx's largest common subgraph of the pair (ISMAGS, labels matched): the graph matching
    a diff needs, without scipy (its graph edit distance imports scipy, no dependency of ours)."""
    ismags = nx.isomorphism.ISMAGS(_digraph(a), _digraph(b),
                                   node_match=lambda x, y: x["label"] == y["label"])  # fmt: skip
    return max((len(m) for m in ismags.largest_common_subgraph()), default=0)


def _timed_child(fn: Callable[..., Any], args: tuple[Any, ...], limit_s: float) -> float | None:
    """Seconds `fn(*args)` took in a child process, or None past `limit_s` (killed)."""
    ctx = multiprocessing.get_context("fork")
    t0 = time.perf_counter()
    proc = ctx.Process(target=fn, args=args)
    proc.start()
    proc.join(limit_s)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mcs-nodes", type=int, nargs="+", default=[100, 400, 1600, 3200])
    ap.add_argument("--mcs-limit", type=float, default=60.0, help="seconds for one common-subgraph search")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        session = import_trace(decompressed(LOG, Path(tmp)))
    c = next(c for c in session.compiles if c.aot is not None and c.aot.backward is not None)
    dyn = max((x.dynamo_graph for x in session.compiles if x.dynamo_graph), key=lambda g: len(g.nodes))
    post = next(o.post_grad for o in c.inductor if o.graph == "forward" and o.post_grad is not None)
    aot = c.aot
    assert aot is not None and aot.backward is not None
    bw = aot.backward
    figures = []

    arrays = from_graph(dyn)
    t_fold, tree = _median(lambda: build_groups(arrays, fold=True), args.runs)
    t_plain, _ = _median(lambda: build_groups(arrays, fold=False), args.runs)
    t_wl, (wl_runs, folds) = _median(lambda: _wl_runs(dyn, tree), args.runs)
    print(f"folding: Dynamo graph of {len(dyn.nodes)} nodes; WL finds {wl_runs} runs, the app folds {folds}")
    figures += [figure("folding: app signatures and folds (build_groups with fold - without)",
                       max(t_fold - t_plain, 0.0), "s", None),
                figure("folding: networkx WL hash of every numbered block", t_wl, "s", None),
                figure("folding: runs of identical blocks, WL minus app folds", wl_runs - folds, "runs",
                       None)]

    after = _edited(post)
    t_diff, diff = _median(lambda: graph_diff("post_grad", post, after), args.runs)
    print(f"diff: post-grad forward of {len(post.nodes)} nodes: removed {len(diff.removed)}, "
          f"changed {len(diff.changed)}, renamed {len(diff.renamed)}")
    scaling = []
    for k in args.mcs_nodes:
        small_a = dc.replace(post, nodes=post.nodes[:k])
        small_b = _edited(small_a)
        t_graph_diff, _ = _median(partial(graph_diff, "post_grad", small_a, small_b), args.runs)
        t_mcs = _timed_child(_mcs, (small_a, small_b), args.mcs_limit)
        shown = "over the limit" if t_mcs is None else f"{t_mcs:.2f} s"
        print(f"diff: {k}-node prefix: graph_diff {t_graph_diff * 1e3:.2f} ms, networkx ISMAGS {shown}")
        scaling.append((k, t_graph_diff, t_mcs))
        if t_mcs is None:
            break
    figures.append(figure(f"diff: graph_diff, {len(post.nodes)}-node post-grad forward, edited copy",
                          t_diff, "s", None))
    for k, t_graph_diff, t_mcs in scaling:
        figures.append(figure(f"diff: graph_diff, {k}-node prefix", t_graph_diff, "s", None))
        figures.append(figure(f"diff: networkx largest common subgraph (ISMAGS), {k}-node prefix",
                              args.mcs_limit if t_mcs is None else t_mcs, "s", None))

    saved = [s for s in aot.saved_tensors if any(n.name == s.name for n in bw.nodes)]
    t_plain_reach, n_plain = _median(lambda: _reach_plain(bw, saved), args.runs)
    t_nx_reach, n_nx = _median(lambda: _reach_nx(bw, saved), args.runs)
    t_build, _ = _median(lambda: _digraph(bw), args.runs)
    print(f"paths: backward of {len(bw.nodes)} nodes, {len(saved)} saved tensors; reach the output: "
          f"{n_plain} (dicts), {n_nx} (networkx)")
    figures += [figure(f"paths: {len(saved)} saved tensors' reach and path, dict walk", t_plain_reach, "s",
                       None),
                figure("paths: the same with networkx (DiGraph built once)", t_nx_reach, "s", None),
                figure(f"paths: nx.DiGraph of the {len(bw.nodes)}-node backward, built", t_build, "s", None)]
    figures.append(figure("import networkx, fresh interpreter", statistics.median(
        _import_s("networkx") for _ in range(args.runs)), "s", None))
    report(figures, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
