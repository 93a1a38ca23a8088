"""Autotuning: for each tuned operation, every candidate's measured time as a sorted bar chart.

What max-autotune actually did (the articles say "runs the autotuner over GEMM tile shapes"):
per operation its input shapes, the extern (cuBLAS/ATen) and template candidates with their
block sizes, warps and stages, the winner, the tuning time, and the candidates that failed with
the reason Inductor logged ("out of resource: shared memory").
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QListWidget, QSplitter, QVBoxLayout, QWidget

from compiler_core.session import AutotuneResult, Compile, Session
from compiler_core.session.model import AutotuneChoice
from compiler_core.stages import ranked
from explorer.panes.base import Pane
from explorer.plain_text import clip, plain_label, rich, rich_label
from explorer.state import SelectionModel, SessionState

WINNER = "#59a14f"
EXTERN = "#4e79a7"
TEMPLATE = "#f28e2b"
_CONFIG_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages", "GROUP_M", "tile_shape")


def choice_label(c: AutotuneChoice) -> str:
    cfg = " ".join(f"{k}={c.config[k]}" for k in _CONFIG_KEYS if k in c.config)
    return f"{c.name} {cfg}".strip()


def tuned_ops(session: Session, current: Compile | None) -> list[tuple[str, AutotuneResult]]:
    """(partition, result) of the current compile, or of every compile when it tuned nothing."""
    compiles = [current] if current is not None else []
    found = [(o.graph, r) for c in compiles for o in c.inductor for r in o.autotune]
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
        self.failures = plain_label()
        self.failures.setWordWrap(True)
        right = QWidget()
        col = QVBoxLayout(right)
        col.setContentsMargins(0, 0, 0, 0)
        for w in (self.header, self.plot, self.failures):
            col.addWidget(w)
        split = QSplitter()
        split.addWidget(self.ops)
        split.addWidget(right)
        split.setSizes([220, 600])
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)

    def on_session(self, session: Session) -> None:
        self.on_compile(self.state.current)

    def on_compile(self, current: Compile | None) -> None:
        self.results = tuned_ops(self.state.session, current)
        self.ops.clear()
        for graph, r in self.results:
            self.ops.addItem(f"{r.op} [{graph}] {r.shape}")
        if self.results:
            self.ops.setCurrentRow(0)
        else:
            self.plot.clear()
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
        template = "<b>{op}</b> ({graph}) {shape}: {n} candidates, winner <b>{winner}</b>{tuning}"
        self.header.setText(rich(template, op=r.op, graph=graph, shape=r.shape, n=len(r.choices),
                                 winner=r.winner or "—", tuning=tuning))
        self._bars(timed, r.winner)
        reasons = "; ".join(f"{c.name}: {c.error}" for c in failed)
        self.failures.setText(clip(f"Failed: {reasons}") if failed else "")

    def _bars(self, timed: list[AutotuneChoice], winner: str) -> None:
        n = len(timed)
        ys = list(range(n))
        brushes = [WINNER if c.name == winner else EXTERN if c.kind == "extern" else TEMPLATE for c in timed]
        widths = [c.time_ms or 0.0 for c in timed]
        bars = pg.BarGraphItem(x0=[0.0] * n, y=ys, height=0.7, width=widths, brushes=brushes)
        self.plot.addItem(bars)
        axis = self.plot.getAxis("left")
        axis.setTicks([[(i, choice_label(c)) for i, c in enumerate(timed)]])
        axis.setWidth(min(320, 7 * max((len(choice_label(c)) for c in timed), default=10)))
        self.plot.getViewBox().invertY(True)
        self.plot.setYRange(-0.5, max(n - 0.5, 0.5))
        self.bar_widths = widths

    def has_content(self) -> bool:
        return bool(self.results)
