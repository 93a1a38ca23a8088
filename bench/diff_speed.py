"""How fast two 32-layer training compiles compare: `diff_sessions` and the `diff` command.

The pair is the real H200 log of HF Llama's 32-layer training step (bench/data/hf_llama_train)
and the same session edited as a one-line code change edits it: one node removed from the middle
of every graph (Dynamo, AOT forward/backward, post-grad), every node after it renamed (FX names
are counters, so one op less early renames the rest: the worst case for a diff that pairs by
name), its saved tensors renamed with it, and one kernel per partition gone. A diff of the log
against itself is timed too (the all-equal fast path).

Figures: `diff_sessions` in this process (median of `--runs`), and the whole command
(`python -m compiler_core diff LOG EDITED.json --json` in a fresh process: reading both sides,
the diff and the JSON), wall and CPU; and the command on two copies of the log (both sides
imported from a 32-layer training log, the case of two runs' logs). Targets: a few
seconds on this machine: diff ≤ 2 s, command ≤ 8 s. With `--json` the last line is the figures JSON.
"""

from __future__ import annotations

import argparse
import dataclasses as dc
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_figures import decompressed, figure, report

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler_core.analysis import import_trace  # noqa: E402
from compiler_core.diff import diff_sessions  # noqa: E402
from compiler_core.session import Compile, Graph, Session, save  # noqa: E402

LOG = "hf_llama_train"
_WORD = re.compile(r"[A-Za-z_]\w*")
_DOTTED = re.compile(r"^[\w.]+$")


def _edit_graph(g: Graph | None, renames: dict[str, str]) -> Graph | None:
    """`g` without its middle node, every later node renamed (`add_7` → `add_7_e`), the removed
    node's consumers reading one input less; `renames` collects the new names."""
    if g is None:
        return None
    nodes = list(g.nodes)
    mid = len(nodes) // 2
    gone = nodes[mid].name
    mine = {n.name: n.name + "_e" for n in nodes[mid + 1 :] if n.op != "output"}
    renames.update(mine)
    out = []
    for n in nodes[:mid] + nodes[mid + 1 :]:
        target = n.target
        if n.op == "call_function" and not _DOTTED.match(target):  # an expression naming its operands
            target = _WORD.sub(lambda m: mine.get(m.group(0), m.group(0)), target)
        out.append(dc.replace(n, name=mine.get(n.name, n.name), target=target,
                              inputs=tuple(mine.get(i, i) for i in n.inputs if i != gone)))  # fmt: skip
    return dc.replace(g, nodes=tuple(out), text="")


def edited(s: Session) -> Session:
    compiles = []
    for c in s.compiles:
        aot = c.aot
        if aot is not None:
            fw: dict[str, str] = {}
            aot = dc.replace(aot, forward=_edit_graph(aot.forward, fw),
                             backward=_edit_graph(aot.backward, {}),
                             saved_tensors=tuple(dc.replace(t, name=fw.get(t.name, t.name),
                                                            producer=fw.get(t.producer, t.producer))
                                                 for t in aot.saved_tensors),
                             recomputed=tuple(fw.get(r, r) for r in aot.recomputed))  # fmt: skip
        inductor = tuple(dc.replace(o, post_grad=_edit_graph(o.post_grad, {}), kernels=o.kernels[1:])
                         for o in c.inductor)  # fmt: skip
        dynamo = _edit_graph(c.dynamo_graph, {})
        compiles.append(dc.replace(c, dynamo_graph=dynamo, aot=aot, inductor=inductor))
    return dc.replace(s, compiles=tuple(compiles), links={})


def _timed(f: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _command(log: Path, other: Path) -> tuple[float, float]:
    """(wall s, CPU s) of the diff command in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "compiler_core", "diff", str(log), str(other), "--json"]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"diff command failed: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cs-diff-speed-") as folder:
        tmp = Path(folder)
        log = decompressed(LOG, tmp)
        before = import_trace(log)
        after = edited(before)
        other = tmp / "edited.json"
        save(after, str(other))
        diff = diff_sessions(before, after)
        changed = sum(len(g.removed) + len(g.added) + len(g.changed) for c in diff.compiles for g in c.graphs)
        print(f"{LOG}: {len(before.compiles)} compiles, "
              f"{sum(len(g.nodes) for c in before.compiles for g in _graphs(c))} graph nodes; "
              f"edited pair: {changed} node differences reported")  # fmt: skip
        same = _timed(lambda: diff_sessions(before, before), args.runs)
        pair = _timed(lambda: diff_sessions(before, after), args.runs)
        wall, cpu = _command(log, other)
        twin = tmp / "twin" / log.name
        twin.parent.mkdir()
        twin.write_bytes(log.read_bytes())
        logs_wall, logs_cpu = _command(log, twin)
    figures = [
        figure("32-layer Llama training: diff_sessions, edited pair", pair, "s", 2.0),
        figure("32-layer Llama training: diff_sessions, log against itself", same, "s", 2.0),
        figure("32-layer Llama training: diff command (log + edited session), wall", wall, "s", 8.0),
        figure("32-layer Llama training: diff command, CPU", cpu, "s", None),
        figure("32-layer Llama training: diff command, two logs read (wall)", logs_wall, "s", 8.0),
        figure("32-layer Llama training: diff command, two logs read (CPU)", logs_cpu, "s", None),
    ]
    report(figures, args.json)
    return 0 if all(f["ok"] is not False for f in figures) else 1


def _graphs(c: Compile) -> list[Graph]:
    gs = [c.dynamo_graph, *([c.aot.forward, c.aot.backward] if c.aot else []),
          *(o.post_grad for o in c.inductor)]
    return [g for g in gs if g is not None]


if __name__ == "__main__":
    raise SystemExit(main())
