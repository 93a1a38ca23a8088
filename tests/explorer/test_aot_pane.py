"""AOT pane on a real transformer training capture (tests/fixtures/transformer_block.json): clicking a
forward op lights its backward partners and says whether its value is saved or recomputed; the
memory-budget tab lists a sweep. Partners and links are rebuilt with the core's own builder
(torch-free), so the fixture recorded before they existed serves as it is."""

from __future__ import annotations

import dataclasses
import os

import pytest

from compiler_core.analysis.backward_links import backward_info, link_backward
from compiler_core.session import LinkBuilder, Ref, RefKind, Session, load
from compiler_core.session.model import BudgetPoint
from explorer.actions.budget_runs import BudgetRuns
from explorer.panes.aot_pane import AotPane
from explorer.state import SessionState
from tests.conftest import FIXTURES

SHOTS = os.environ.get("COMPILESCOPE_SHOTS")


@pytest.fixture
def session() -> Session:
    s = load(FIXTURES / "transformer_block.json")
    c = s.compiles[0]
    assert c.aot is not None
    info = backward_info(c.aot.forward, c.aot.backward)
    aot = dataclasses.replace(c.aot, backward_of=info.backward_of, backward_via=info.via,
                              recomputed=info.recomputed, recomputed_bytes=info.recomputed_bytes)  # fmt: skip
    lb = LinkBuilder()
    for a, others in s.links.items():
        for b in others:
            lb.add_encoded(a, b)
    link_backward(lb, aot, {k: Ref.prefix(k, c.compile_id, c.rank) for k in RefKind})
    budget = (BudgetPoint(1.0, 477_000, 21, 14, 1.3, 2_000_000, "NVIDIA H200", "2.11.0"),
              BudgetPoint(0.2, 262_000, 18, 32, 1.4, 1_500_000, "NVIDIA H200", "2.11.0"))
    return dataclasses.replace(s, compiles=(dataclasses.replace(c, aot=aot), *s.compiles[1:]),
                               links=lb.freeze(), memory_budget=budget)  # fmt: skip


def test_forward_op_click_lights_backward_partners(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    state = SessionState()
    selection = state.selection
    pane = AotPane(state, selection)
    qtbot.addWidget(pane)
    state.set_session(session)
    pane.resize(1600, 1000)
    pane.show()
    qtbot.waitExposed(pane)
    c = session.compiles[0]
    aot = c.aot
    assert aot is not None
    selection.select({Ref.aot_node(c.compile_id, "forward", "erf", c.rank)})
    lit = {(r.graph, r.name) for r in pane.graphs.highlighted()}
    assert {("backward", p) for p in aot.backward_of["erf"]} <= lit
    assert "recomputed" in pane.detail.text() and "same autograd seq_nr" in pane.detail.text()
    assert f"♻ {len(aot.recomputed)} recomputed nodes" in pane.totals.text()
    # a forward op whose value is saved says so, and the saved tensor's row lights up
    saved = next(t for t in aot.saved_tensors if t.producer and t.producer in aot.backward_of
                 and t.producer not in aot.recomputed)  # fmt: skip
    selection.select({Ref.aot_node(c.compile_id, "forward", saved.producer, c.rank)})
    assert "<b>saved</b> as" in pane.detail.text()
    assert any(item.isSelected() for item in pane._tensor_items.values())
    # a selection made elsewhere (a kernel, a source line) replaces the text of the op clicked
    # before: it names what it lights in this graph, never the earlier op
    before = pane.detail.text()
    elsewhere = next(r for r in state.links.related(Ref.aot_node(c.compile_id, "forward", "erf", c.rank))
                     if r.kind in (RefKind.KERNEL, RefKind.SOURCE_LINE))
    selection.select({elsewhere})
    lit_now = {r.name for r in pane.graphs.highlighted()}
    assert lit_now and pane.detail.text() != before
    assert any(name in pane.detail.text() for name in lit_now), pane.detail.text()
    selection.select(set())
    assert pane.detail.text().startswith("Click a forward op")
    # memory-budget tab: one row per budget
    assert pane.budget.topLevelItemCount() == 2 and pane.budget.topLevelItem(1).text(3) == "32"
    if SHOTS:
        pane.grab().save(os.path.join(SHOTS, "aot_pane.png"))


def test_the_pane_asks_for_a_sweep_and_the_controller_stores_its_points(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    """Panes only request: Re-partition emits a request; the controller starts the sweep, feeds
    the pane its rows, and puts the points in a new session (no worker process here)."""
    points = session.memory_budget
    state = SessionState()
    pane = AotPane(state, state.selection)
    qtbot.addWidget(pane)
    runs = BudgetRuns(state)
    runs.attach(pane)
    started: list[tuple[str, str, str]] = []
    runs.sweep.start = lambda *args: started.append(args)  # type: ignore[method-assign]
    state.set_session(dataclasses.replace(session, memory_budget=()))
    pane.budget_values.setText("1,0.2")
    pane._run_sweep()
    assert started == [(session.meta.origin_path, "1,0.2", pane.budget_device.currentText())]
    assert not pane.budget_run.isEnabled()
    runs.sweep.pointReady.emit(points[0])
    assert pane.budget.topLevelItemCount() == 1  # rows fill while later budgets still compile
    runs.sweep.finished.emit(list(points), "")
    assert state.session.memory_budget == points and pane.budget_run.isEnabled()
    assert pane.budget.topLevelItemCount() == 2


@pytest.mark.slow
def test_sweep_button_runs_the_worker_and_stores_points(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    """The GUI's lever: a real sweep in a worker process, its rows in the table and the session."""
    from tests.conftest import EXAMPLES

    model = str(EXAMPLES / "transformer_block.py")
    session = dataclasses.replace(session, memory_budget=(),
                                  meta=dataclasses.replace(session.meta, origin_path=model))  # fmt: skip
    state = SessionState()
    selection = state.selection
    pane = AotPane(state, selection)
    qtbot.addWidget(pane)
    runs = BudgetRuns(state)  # the pane asks; the controller runs the sweep and stores the points
    runs.attach(pane)
    state.set_session(session)
    assert pane.budget_run.isEnabled()
    pane.budget_values.setText("1,0")
    with qtbot.waitSignal(runs.sweep.finished, timeout=600_000) as done:
        pane.budget_run.click()
    points, error = done.args
    assert error == "" and [p.budget for p in points] == [1.0, 0.0]
    assert points[0].saved_bytes > points[1].saved_bytes
    assert state.session.memory_budget == tuple(points)
    assert pane.budget.topLevelItemCount() == 2


def test_each_forward_op_names_the_recomputed_inputs_its_backward_reads(session: Session) -> None:
    """The detail's recomputed list, for every forward op, against a plain walk of the backward
    graph: the recomputed nodes that feed one of the op's backward partners, no more, no less."""
    from explorer.panes.aot_facts import forward_op_facts

    aot = session.compiles[0].aot
    assert aot is not None and aot.backward is not None and aot.recomputed
    inputs = {n.name: n.inputs for n in aot.backward.nodes}
    named = 0
    for op, partners in aot.backward_of.items():
        read = set()
        for p in partners:
            read.update(inputs.get(p, ()))
        want = sorted(set(aot.recomputed) & read)
        text = forward_op_facts(aot, op)
        if want:
            named += 1
            shown = text.split("and recomputed: ♻ ", 1)[1]
            assert shown.split(" … ")[0].split(", ") == want[:8], (op, shown)
        else:
            assert "and recomputed" not in text, op
    assert named, "the fixture should have forward ops whose backward reads recomputed nodes"


def test_the_joint_graph_is_decorated_alike_inline_and_off_the_gui_thread(qtbot, session: Session) -> None:  # type: ignore[no-untyped-def]
    """Saved tensors are the joint graph's emphasised edges (forward producer to backward
    consumer) and recomputed nodes carry their mark, whether the pane maps them on the GUI
    thread (a pane alone) or on a worker (the main window spreads its rebuilds)."""
    drawn = []
    for spread in (False, True):
        state = SessionState()
        state.updates.spread = spread
        pane = AotPane(state, state.selection)
        qtbot.addWidget(pane)
        state.set_session(session)
        canvas = pane.graphs.canvas
        qtbot.waitUntil(lambda p=pane, s=state: s.updates.pending() == 0 and not p._joint_refs.busy()
                        and not p.graphs.canvas.busy, timeout=30_000)  # fmt: skip
        drawn.append((dict(canvas._edge_styles), dict(canvas._marks)))
    assert drawn[0] == drawn[1]
    edges, marks = drawn[0]
    aot = session.compiles[0].aot
    assert aot is not None
    saved = {(t.producer, consumer) for t in aot.saved_tensors for consumer in t.consumers}
    assert edges and set(edges) <= saved
    assert all(style.label for style in edges.values())  # each edge says its tensor's size
    assert marks and set(marks) <= set(aot.recomputed) and set(marks.values()) == {"♻"}
