"""Autotuning: for each tuned operation, every candidate's measured time as a sorted bar chart.

What max-autotune actually did (the articles say "runs the autotuner over GEMM tile shapes"):
per operation its input shapes, the extern (cuBLAS/ATen) and template candidates with their
block sizes, warps and stages, the winner, the tuning time, and the candidates that failed with
the reason Inductor logged ("out of resource: shared memory"). Every bar carries its label
(template + block sizes + stages/warps) and its time; the table below names each candidate in
full. Clicking an operation or a candidate selects the post-grad nodes that tuning decided and
the kernel its winner became (resolved in the core, analysis/autotune_targets.py), so the graph
and kernel panes light them.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from compiler_core.analysis.autotune_records import ranked
from compiler_core.session import AutotuneResult, Compile, Ref, Session
from compiler_core.session.model import AutotuneChoice
from compiler_core.session.vocab import partition_of
from explorer.panes.base import Pane
from explorer.plain_text import clip, plain_label, rich, rich_label, tip
from explorer.state import SelectionModel, SessionState

WINNER = "#59a14f"
EXTERN = "#4e79a7"
TEMPLATE = "#f28e2b"
_CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "GROUP_M", "tile_shape")


CANDIDATE_COLUMNS = ["Candidate", "Kind", "Block M×N×K", "Stages", "Warps", "Time (µs)", "vs best"]


def choice_label(c: AutotuneChoice) -> str:
    cfg = " ".join(f"{k}={c.config[k]}" for k in _CONFIG_KEYS if k in c.config)
    return f"{c.name} {cfg}".strip()


def block_text(c: AutotuneChoice) -> str:
    dims = [c.config.get(k, "") for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")]
    if any(dims):
        return "×".join(d for d in dims if d)
    return c.config.get("tile_shape", "").strip("()").replace(", ", "×")


def bar_label(c: AutotuneChoice) -> str:
    """Short enough to fit the axis: `triton_mm_13 64×64×32 s3 w4`, `mm (extern)`."""
    if c.kind == "extern":
        return f"{c.name} (extern)"
    parts = [c.name, block_text(c)]
    if "num_stages" in c.config:
        parts.append(f"s{c.config['num_stages']}")
    if "num_warps" in c.config:
        parts.append(f"w{c.config['num_warps']}")
    return " ".join(p for p in parts if p)


def op_label(graph: str, r: AutotuneResult) -> str:
    shapes = " · ".join(part.strip().split(" ")[0] for part in r.shape.split(",") if part.strip())
    return f"{r.op} {shapes} [{graph}] → {r.winner or '—'}"


def tuned_ops(session: Session, current: Compile | None) -> list[tuple[str, AutotuneResult]]:
    """(partition, result) of the current compile, or of every compile when it tuned nothing."""
    compiles = [current] if current is not None else []
    found: list[tuple[str, AutotuneResult]] = [(o.graph, r) for c in compiles for o in c.inductor
                                               for r in o.autotune]
    if found:
        return found
    everywhere = [(c.compile_id, o) for c in session.compiles for o in c.inductor]
    return [(f"{cid} {o.graph}", r) for cid, o in everywhere for r in o.autotune]


class AutotunePane(Pane):
    title = "Autotuning"
    stage = "inductor"

    def __init__(self, state: SessionState, selection: SelectionModel) -> None:
        super().__init__(state, selection)
        self.results: list[tuple[str, AutotuneResult]] = []
        self.ops = QListWidget()
        self.ops.currentRowChanged.connect(self.show_result)
        self.plot = pg.PlotWidget(background="w")
        self.plot.setLabel("bottom", "time (ms)")
        self.header = rich_label()
        self.header.setWordWrap(True)
        self.failures = plain_label()
        self.failures.setWordWrap(True)
        self.table = QTreeWidget()
        self.table.setHeaderLabels(CANDIDATE_COLUMNS)
        self.table.setRootIsDecorated(False)
        self.table.itemClicked.connect(self._item_clicked)
        self.ops.itemClicked.connect(self._item_clicked)
        right = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        col = QVBoxLayout(top)
        col.setContentsMargins(0, 0, 0, 0)
        for w in (self.header, self.plot, self.failures):
            col.addWidget(w)
        right.addWidget(top)
        right.addWidget(self.table)
        right.setSizes([600, 300])
        split = QSplitter()
        split.addWidget(self.ops)
        split.addWidget(right)
        split.setSizes([360, 900])
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    def _item_clicked(self, _item: object) -> None:
        self._select_targets()

    def on_session(self, session: Session) -> None:
        self.on_compile(self.state.current)

    def on_compile(self, current: Compile | None) -> None:
        self.results = tuned_ops(self.state.session, current)
        self.ops.clear()
        for graph, r in self.results:
            item = QListWidgetItem(op_label(graph, r))
            item.setToolTip(tip(f"{r.op} [{graph}] {r.shape}\nwinner {r.winner}, kernel {r.kernel or '—'}\n"
                                f"tuned nodes: {', '.join(r.nodes) or '—'}"))  # fmt: skip
            self.ops.addItem(item)
        if self.results:
            self.ops.setCurrentRow(0)
        else:
            self.plot.clear()
            self.table.clear()
            self.header.setText("No autotuning in this session: compile with mode='max-autotune' "
                                "(or max-autotune-no-cudagraphs) to see the candidates Inductor benchmarks.")
            self.failures.setText("")

    def show_result(self, index: int) -> None:
        self.plot.clear()
        if not 0 <= index < len(self.results):
            return
        graph, r = self.results[index]
        timed, failed = ranked(r)
        tuning = f", tuning {r.tuning_s:.2f} s" if r.tuning_s is not None else ""
        nodes = ", ".join(r.nodes[:6]) + (f" … (+{len(r.nodes) - 6})" if len(r.nodes) > 6 else "")
        target = (rich("<br>decides {n} node(s): {nodes} → kernel <b>{kernel}</b> "
                       "(click the operation or a candidate to select them)",
                       n=len(r.nodes), nodes=nodes, kernel=r.kernel or "—") if r.nodes else
                  "<br>tuned nodes unknown: no post-grad graph of this partition")  # fmt: skip
        template = "<b>{op}</b> ({graph}) {shape}: {n} candidates, winner <b>{winner}</b>{tuning}"
        self.header.setText(rich(template, op=r.op, graph=graph, shape=r.shape, n=len(r.choices),
                                 winner=r.winner or "—", tuning=tuning) + target)
        self._bars(timed, r.winner)
        self._table(timed, failed, r.winner)
        reasons = "; ".join(f"{c.name}: {c.error}" for c in failed)
        self.failures.setText(clip(f"Failed: {reasons}") if failed else "")

    def _bars(self, timed: list[AutotuneChoice], winner: str) -> None:
        n = len(timed)
        ys = list(range(n))
        brushes = [WINNER if c.name == winner else EXTERN if c.kind == "extern" else TEMPLATE for c in timed]
        widths = [c.time_ms or 0.0 for c in timed]
        bars = pg.BarGraphItem(x0=[0.0] * n, y=ys, height=0.7, width=widths, brushes=brushes)
        self.plot.addItem(bars)
        labels = [bar_label(c) for c in timed]
        axis = self.plot.getAxis("left")
        axis.setTicks([list(enumerate(labels))])
        # pyqtgraph drops a tick label wider than the axis: size the axis to the longest label
        axis.setWidth(min(420, 8 * max((len(t) for t in labels), default=10) + 12))
        for i, c in enumerate(timed):
            text = pg.TextItem(f"{(c.time_ms or 0.0) * 1000:.1f} µs", color="#333", anchor=(0, 0.5))
            text.setPos(widths[i], i)
            self.plot.addItem(text)
        self.plot.getViewBox().invertY(True)
        self.plot.setYRange(-0.5, max(n - 0.5, 0.5))
        self.plot.setXRange(0, max(widths, default=1.0) * 1.25, padding=0)
        self.bar_widths = widths
        self.bar_labels = labels

    def _table(self, timed: list[AutotuneChoice], failed: list[AutotuneChoice], winner: str) -> None:
        self.table.clear()
        best = timed[0].time_ms if timed else None
        for c in [*timed, *failed]:
            us = "failed" if c.time_ms is None else f"{c.time_ms * 1000:.2f}"
            vs = f"{c.time_ms / best:.2f}×" if c.time_ms and best else ""
            name = f"★ {c.name}" if c.name == winner else c.name
            item = QTreeWidgetItem([name, c.kind, block_text(c), c.config.get("num_stages", ""),
                                    c.config.get("num_warps", ""), us, vs])  # fmt: skip
            item.setToolTip(0, tip(choice_label(c) + (f"\n{c.error}" if c.error else "")))
            self.table.addTopLevelItem(item)
        for col in range(len(CANDIDATE_COLUMNS)):
            self.table.resizeColumnToContents(col)

    def target_refs(self) -> set[Ref]:
        """The tuned post-grad nodes and the winner's kernel of the current operation."""
        c, index = self.state.current, self.ops.currentRow()
        if not 0 <= index < len(self.results):
            return set()
        graph, r = self.results[index]
        if partition_of(graph) is None:
            return set()  # a row of another compile ("0/1 forward"): nothing of the current one
        cid, rank = (c.compile_id, c.rank) if c is not None else ("", None)
        refs = {Ref.post_grad_node(cid, graph, n, rank) for n in r.nodes}
        if r.kernel:
            refs.add(Ref.kernel(cid, graph, r.kernel, rank))
        return refs

    def _select_targets(self) -> None:
        refs = self.target_refs()
        if refs:
            self.selection.select(refs)

    def has_content(self) -> bool:
        return bool(self.results)
