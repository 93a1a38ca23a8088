"""Graph canvas benchmark: layout + first paint, pan/zoom repaint, expand, memory (issue targets).

Run: `.venv/bin/python bench/graph_canvas.py [--json] [--screenshot DIR]`. Synthetic FX-shaped
transformer graphs (explorer/layout/synthetic_graphs.py) at 1k/10k/50k nodes, plus the largest
graph found in the shared trace logs (read with compiler_core.analysis.import_trace). Each figure
prints with its target; with --json the last line is `{"figures": [...]}`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPointF  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from compiler_core.session import Graph  # noqa: E402
from explorer.canvas import GraphCanvas  # noqa: E402
from explorer.canvas.layout_job import full_layout, relayout  # noqa: E402
from explorer.layout import from_sections, layered_layout  # noqa: E402
from explorer.layout.synthetic_graphs import transformer_graph  # noqa: E402

TRACES = ROOT.parent / "shared" / "traces" / "tlparse-inputs"
FIGURES: list[dict[str, object]] = []


def figure(name: str, value: float, unit: str, target: float | None) -> None:
    ok = None if target is None else value <= target
    FIGURES.append({"name": name, "value": round(value, 4), "unit": unit, "target": target, "ok": ok})
    verdict = "" if ok is None else ("  OK" if ok else "  MISSED")
    print(f"{name:<48} {value:10.4f} {unit:<4} target {target}{verdict}", flush=True)


def show(canvas: GraphCanvas, graph: Graph, limit: int, app: QApplication) -> float:
    """Layout (as the worker runs it) + install + one paint, in seconds."""
    t = time.perf_counter()
    res = full_layout(lambda: from_sections([(graph, graph.kind)]), limit)
    canvas.runner.generation += 1
    canvas._install(canvas.runner.generation, res, sync=True)
    canvas.view.grab()
    return time.perf_counter() - t


def repaint_ms(canvas: GraphCanvas, steps: int = 40) -> float:
    view, times = canvas.view, []
    for i in range(steps):
        if i % 2:
            view.pan_by(37.0, -23.0)
        else:
            view.zoom_at(1.1 if i % 4 else 1 / 1.1, QPointF(view.width() / 2, view.height() / 2))
        t = time.perf_counter()
        view.grab()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def largest_real_graph() -> Graph | None:
    from compiler_core.analysis.session_builder import import_trace

    best: Graph | None = None
    for path in sorted(TRACES.rglob("*")):
        if not path.is_file() or path.suffix not in (".log", ".txt"):
            continue
        try:
            session = import_trace(path)
        except Exception:  # a trace the importer rejects is not this benchmark's concern
            continue
        for c in session.compiles:
            aot = [c.aot.joint, c.aot.forward, c.aot.backward, c.aot.inference] if c.aot else []
            for g in [c.dynamo_graph, *aot, *(o.post_grad for o in c.inductor)]:
                if g is not None and (best is None or len(g.nodes) > len(best.nodes)):
                    best = g
    return best


def stall_ms() -> float:
    """Longest gap of a 5 ms timer while the Dynamo pane of a fresh main window lays out 50k nodes
    (its own process, as the app runs; see canvas_stall_probe.py)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "canvas_stall_probe.py"), "50000"],
        capture_output=True, text=True, check=True, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    ).stdout
    return float(json.loads(out.strip().splitlines()[-1])["max_gap_ms"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    canvas = GraphCanvas()
    canvas.resize(1400, 900)
    canvas.show()
    app.processEvents()
    for n, target in ((1000, None), (10_000, 1.0), (50_000, 5.0)):
        g = transformer_graph(n)
        figure(f"layout+first paint {n // 1000}k (grouped view)", show(canvas, g, 300, app), "s", target)
        a = from_sections([(g, "g")])
        t = time.perf_counter()
        layered_layout(a.n, a.src, a.dst, a.widths, a.heights)
        figure(f"flat layered layout {n // 1000}k (all nodes)", time.perf_counter() - t, "s", None)
        if n == 10_000:
            res = canvas.result
            assert res is not None
            t = time.perf_counter()
            g0 = next(c for c in range(res.tree.count) if c not in res.expanded and res.tree.size[c] > 20)
            ex = res.expanded | {g0, *res.tree.ancestors(g0)}
            new = relayout(res.arrays, res.tree, res.layout, ex, res)
            canvas._install(canvas.runner.generation, new, True)
            canvas.view.grab()
            figure("expand one module group 10k", (time.perf_counter() - t) * 1000, "ms", 100.0)
            # Worst case for painting: every node and edge drawn (all groups expanded, fit view).
            t = time.perf_counter()
            all_ex = set(range(res.tree.count))
            new = relayout(res.arrays, res.tree, res.layout, all_ex, res)
            canvas._install(canvas.runner.generation, new, True)
            figure("expand all groups 10k (10k nodes drawn)", time.perf_counter() - t, "s", None)
            canvas.fit_to_view()
            figure("pan/zoom repaint 10k, all drawn, median", repaint_ms(canvas), "ms", 16.0)
            canvas.view.center_on_point(float(res.scene.x[500]), float(res.scene.y[500]), 1.0)
            figure("pan/zoom repaint 10k, labels legible, median", repaint_ms(canvas), "ms", 16.0)
    figure("peak RSS after 50k", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "MiB", 1024.0)
    figure("event-loop stall, 50k layout in the main window", stall_ms(), "ms", 50.0)
    real = largest_real_graph()
    if real is not None:
        t = show(canvas, real, 300, app)
        name = f"largest real graph ({len(real.nodes)} nodes, {real.kind}) layout+paint"
        figure(name, t * 1000, "ms", None)
        if args.screenshot:
            args.screenshot.mkdir(parents=True, exist_ok=True)
            canvas.grab().save(str(args.screenshot / "real_graph.png"))
    if args.json:
        print(json.dumps({"figures": FIGURES}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
