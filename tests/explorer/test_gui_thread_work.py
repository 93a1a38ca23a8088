"""What keeps the GUI thread's turns short on a deep model, checked functionally (no clocks).

In the main window (`updates.spread`), the panes' heavy Python runs on worker threads: the
post-grad and Dynamo ref indexes, the Decompositions table, lexing a long text. Long tables
fill in slices, and a click looks its Decompositions rows up in an index instead of scanning
every row. The timings themselves live in bench/gui_startup.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from compiler_core.queries.decompositions import decomposition_table, rows_for_refs
from compiler_core.session import Ref, Session
from compiler_core.session.codec import load as open_session
from explorer.jobs import Lane
from explorer.main_window import MainWindow
from explorer.panes import code_view, decomposition_pane, dynamo_pane, inductor_pane, syntax
from explorer.panes.decomposition_pane import row_index, rows_hit
from explorer.panes.syntax import line_spans
from explorer.state.update_queue import UpdateQueue
from tests.conftest import FIXTURES


def _recording(calls: list[str], fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread().name)
        return fn(*args, **kwargs)

    return wrapper


@pytest.fixture
def stages() -> Session:
    return open_session(FIXTURES / "stages_cpu.json")


def test_heavy_pane_work_runs_on_workers_in_the_window(
    qtbot: Any, tmp_path: Any, stages: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: dict[str, list[str]] = {"plan": [], "dynamo": [], "decomp": []}
    monkeypatch.setattr(inductor_pane, "_plan", _recording(calls["plan"], inductor_pane._plan))
    index = _recording(calls["dynamo"], dynamo_pane.sections_index)
    monkeypatch.setattr(dynamo_pane, "sections_index", index)
    monkeypatch.setattr(decomposition_pane, "_table", _recording(calls["decomp"], decomposition_pane._table))
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.set_session(stages, "stages.json")  # flushes: every queued piece and worker result is in
    gui = threading.current_thread().name
    for what, threads in calls.items():
        assert threads and gui not in threads, (what, threads)
    inductor, dynamo = window.panes["InductorPane"], window.panes["DynamoPane"]
    decomp = window.panes["DecompositionPane"]
    c = window.state.current
    assert c is not None
    # what the workers computed is on screen, as a pane built alone (synchronously) shows it
    kernels = [k for o in c.inductor for k in o.kernels]
    assert len(inductor._kernel_items) == len(kernels) > 0  # type: ignore[attr-defined]
    assert dynamo.guards.topLevelItemCount() == len(c.guards)  # type: ignore[attr-defined]
    assert dynamo.graphs.refs() and inductor.graphs.refs()  # type: ignore[attr-defined]
    assert decomp.table.rowCount() == len(decomp.rows) > 0  # type: ignore[attr-defined]
    assert decomp.table.item(len(decomp.rows) - 1, 0) is not None  # type: ignore[attr-defined]
    window.files.worker.cancel()


def test_decomposition_rows_by_index_match_the_scan(stages: Session) -> None:
    """The pane's per-click index finds exactly the rows `rows_for_refs` scans for, for every
    ref a row names (nodes of every stage, kernels) and for the whole selection at once."""
    c = stages.compiles[0]
    rows = [r for r in decomposition_table(stages, c.compile_id, c.rank) if r.forward_ops]
    assert rows
    index = row_index(rows)
    refs: set[Ref] = set()
    for row in rows:
        refs.update(row.refs(c.compile_id, c.rank))
        refs.update(row.kernels + row.backward_kernels)
        refs.update(Ref.post_grad_node(c.compile_id, "forward", n, c.rank) for n in row.aot_nodes)
    assert len(refs) > len(rows)
    for ref in refs:
        assert rows_hit(index, frozenset({ref})) == set(rows_for_refs(rows, frozenset({ref}))), ref
    assert rows_hit(index, frozenset(refs)) == set(rows_for_refs(rows, frozenset(refs)))
    assert rows_hit(index, frozenset()) == set()


def test_long_text_is_lexed_on_a_worker_and_coloured_when_done(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    monkeypatch.setattr(code_view, "lex", _recording(threads, code_view.lex))
    view = code_view.CodeView()
    qtbot.addWidget(view)
    worker = Lane(view, "lexer")
    text = "".join(f"def f{i}(x):\n    return x + {i}  # line {i}\n" for i in range(400))
    assert len(text) > code_view.LEX_LATER_CHARS
    view.set_code(text, "python", later=worker)
    assert view.toPlainText() == text  # the text shows at once, plain until lexed
    qtbot.waitUntil(lambda: not worker.busy(), timeout=20_000)
    assert threads and threading.current_thread().name not in threads
    assert view._highlighter._spans == line_spans(text, "python")  # coloured as the synchronous path
    # a second set of the same text is cached: coloured at once, nothing submitted
    view.set_code("x = 1\n", "python", later=worker)
    view.set_code(text, "python", later=worker)
    assert not worker.busy() and len(threads) == 1
    assert view._highlighter._spans == line_spans(text, "python")



def test_a_long_texts_colours_are_applied_in_slices_of_the_event_loop(qtbot: Any) -> None:
    """In the window a worker's lexing lands as queued pieces: the lines in view, then the rest
    a slice per turn, until every line is coloured; a text set meanwhile stops the colouring of
    the one it replaced."""
    queue = UpdateQueue()
    queue.spread = True
    view = code_view.CodeView()
    qtbot.addWidget(view)
    worker = Lane(view, "lexer")
    queue.track(worker)
    posted: list[str] = []
    post = queue.post
    queue.post = lambda owner, kind, work: (posted.append(kind), post(owner, kind, work))[1]  # type: ignore[method-assign]
    text = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(6000))
    view.set_code(text, "python", later=worker)
    qtbot.waitUntil(lambda: queue.pending() == 0, timeout=30_000)
    assert posted.count("colour") > 1  # more than one slice
    doc = view.document()
    for line in (0, 3000, 11_998):  # every `def` line coloured, the last included
        assert doc.findBlockByNumber(line).layout().formats(), line
    posted.clear()
    other = text.replace("return x", "return -x")
    view.set_code(other, "python", later=worker)
    qtbot.waitUntil(lambda: "colour" in posted, timeout=30_000)
    view.set_code(text, "python", later=worker)  # replaces it mid-colouring (cached: coloured now)
    so_far = posted.count("colour")
    qtbot.waitUntil(lambda: queue.pending() == 0, timeout=30_000)
    assert posted.count("colour") == so_far  # the slice then pending found it replaced: no more


def test_a_short_text_waits_for_a_worker_until_its_lexer_was_made_once(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pygments compiles a lexer class's tables on its first instance (~100 ms): the first text
    of a language goes to the worker however short; once the lexer was made, short texts are
    lexed at once."""
    threads: list[str] = []
    monkeypatch.setattr(code_view, "lex", _recording(threads, code_view.lex))
    monkeypatch.setattr(syntax, "_made", set())  # as in a fresh process: no lexer made yet
    view = code_view.CodeView()
    qtbot.addWidget(view)
    worker = Lane(view, "lexer")
    view.set_code("def first(x):\n    return x\n", "python", later=worker)
    qtbot.waitUntil(lambda: not worker.busy(), timeout=20_000)
    assert len(threads) == 1 and threads[0] != threading.current_thread().name
    assert syntax.lexer_ready("python") and not syntax.lexer_ready("cpp")
    view.set_code("def second(x):\n    return x\n", "python", later=worker)
    assert not worker.busy() and len(threads) == 1  # lexed at once, on this thread
    assert view._highlighter._spans == line_spans("def second(x):\n    return x\n", "python")


def test_a_session_arriving_during_startup_waits_for_the_deferred_panes(
    qtbot: Any, tmp_path: Any, stages: Session
) -> None:
    """The loader can finish before the canvas and plot panes are built (one per turn): the
    session is shown after the last of them, not by building them all in one turn."""
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    pending = len(window._pending)
    assert pending >= 2, "canvas and plot panes are deferred"
    window.show_session(stages, "stages.json")
    assert window.state.session is not stages and len(window._pending) == pending
    qtbot.waitUntil(lambda: window.state.session is stages, timeout=60_000)
    assert not window._pending and window._deferred_show is None
    window.state.updates.flush()
    assert window.panes["InductorPane"].has_content()  # type: ignore[attr-defined]
    assert window.windowTitle().endswith("stages.json")
    window.files.worker.cancel()


def test_flush_stops_waiting_for_a_worker_that_never_settles(
    qtbot: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker given new work on every delivery (the livelock one hung test run suggested) must
    not freeze the window in `flush`: it gives up after its wait and names the worker. A worker
    that settles is still waited for."""
    from explorer.state.update_queue import UpdateQueue

    queue = UpdateQueue()
    queue.spread = True
    worker = Lane(name="restless")
    queue.track(worker)
    applied: list[int] = []

    def again(result: int) -> None:
        applied.append(result)
        worker.submit(lambda: result + 1, again)

    worker.submit(lambda: 0, again)
    assert queue.flush(wait_s=0.5) is False
    assert len(applied) > 1  # results kept being applied while it waited
    assert "restless" in capsys.readouterr().err
    worker.cancel()

    settling = Lane(name="settling")
    queue.track(settling)
    got: list[str] = []
    settling.submit(lambda: "done", got.append)
    assert queue.flush(wait_s=30) is True
    assert got == ["done"]


def test_ensure_panes_shows_the_session_that_waited_for_them(
    qtbot: Any, tmp_path: Any, stages: Session
) -> None:
    """`--screenshot` after a capture: the session arrived while panes were still deferred, and
    the grab (ensure_panes, flush) ran before a later timer turn showed it: half-filled panes."""
    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    assert window._pending
    window.show_session(stages, "stages.json")
    assert window.state.session is not stages  # waiting for the deferred panes
    window.ensure_panes()
    window.state.updates.flush()
    assert window.state.session is stages and window._deferred_show is None
    assert window.panes["InductorPane"].has_content()  # type: ignore[attr-defined]
    window.files.worker.cancel()


def test_closing_the_window_waits_for_running_pane_jobs(qtbot: Any, tmp_path: Any) -> None:
    """A pane job still running after its window closed would release the window's last
    references on its worker thread; shiboken would then delete those Qt objects inside another
    window's paint event and Qt deadlock. Closing waits for the jobs, and a job holds its worker
    only weakly."""
    import gc
    import time
    import weakref

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    window.ensure_panes()
    worker = window.findChildren(Lane)[0]
    finished: list[bool] = []

    def slow() -> None:
        time.sleep(0.3)
        finished.append(True)

    worker.submit(slow, lambda _: None)
    window.close()
    assert finished == [True]  # the job ended before close() returned
    worker.submit(slow, lambda _: None)  # a pane update queued before the close: dropped
    assert not worker.busy() and finished == [True]
    loose = Lane(name="loose")
    gate = threading.Event()
    loose.submit(gate.wait, lambda _: None)
    ref = weakref.ref(loose)
    (running,) = loose._running
    del loose
    gc.collect()
    assert ref() is None  # the running job does not keep its lane alive
    gate.set()
    running.result()


def test_garbage_cycles_are_collected_on_the_gui_thread_only(qtbot: Any, tmp_path: Any) -> None:
    """A collection tripped on a worker destroyed a closed window's Qt objects there and
    deadlocked against the GUI thread (gc_policy.py). With a window up, a worker allocating
    past every threshold collects nothing; the GUI thread's timer does."""
    import gc

    window = MainWindow(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    assert not gc.isenabled()
    freed_on: list[str] = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            freed_on.append(threading.current_thread().name)

    for _ in range(1000):  # garbage past the first threshold (700), freed only by a collection
        Cycle()
    worker = threading.Thread(target=lambda: [[] for _ in range(200_000)], name="allocating-worker")
    worker.start()
    worker.join()
    assert freed_on == []
    qtbot.waitUntil(lambda: len(freed_on) == 1000, timeout=10_000)
    assert set(freed_on) == {threading.current_thread().name}
