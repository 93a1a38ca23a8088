"""The explorer's application model without Qt: compile switching, selection and link lookups
through the model's one index, the live timeline, on the real 4-layer HF Llama log with a
recompile (bench/data/hf_llama_dynamic.log.xz, torch 2.11 on an H200)."""

from __future__ import annotations

import lzma
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session import Compile, LinkIndex, Ref, RefKind, Session, load
from explorer.state.app_model import AppModel
from tests.conftest import FIXTURES, ROOT

LOG = ROOT / "bench" / "data" / "hf_llama_dynamic.log.xz"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    path = tmp_path_factory.mktemp("log") / "hf_llama_dynamic.log"
    path.write_bytes(lzma.decompress(LOG.read_bytes()))
    return import_trace(str(path))


def _recorder(model: AppModel) -> list[tuple[str, object]]:
    seen: list[tuple[str, object]] = []
    model.session_changed.connect(lambda s: seen.append(("session", s)))
    model.compile_changed.connect(lambda c: seen.append(("compile", c)))
    model.selection.changed.connect(lambda refs: seen.append(("selection", refs)))
    return seen


def _first_kernel_node(c: Compile) -> Ref:
    """A post-grad node that a kernel computes (what a click in the Inductor pane selects)."""
    for part in c.inductor:
        for k in part.kernels:
            for name in k.fused_nodes:
                return Ref.post_grad_node(c.compile_id, k.graph, name, c.rank)
    raise AssertionError(f"no kernel with nodes in {c.compile_id}")


def test_the_model_imports_no_qt() -> None:
    """Qt-free means importable where PySide6 is not loaded (napari's viewer model is tested so)."""
    code = ("import sys; import explorer.state.app_model; "
            "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken', 'torch'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_set_session_picks_the_largest_compile_and_announces_in_order(session: Session) -> None:
    model = AppModel()
    seen = _recorder(model)
    model.set_session(session, "llama.log")
    assert [kind for kind, _ in seen] == ["selection", "session", "compile"]
    assert seen[1][1] is session and model.source_path == "llama.log"
    assert [c.compile_id for c in model.compiles()] == ["0/0", "0/1"]  # the recompile comes second
    biggest = max(session.compiles, key=lambda c: len(c.inductor[0].post_grad.nodes))  # type: ignore[union-attr]
    assert model.current is biggest and seen[2][1] is biggest


def test_switching_compile_announces_once_and_only_on_change(session: Session) -> None:
    model = AppModel()
    model.set_session(session)
    seen = _recorder(model)
    other = next(c for c in model.compiles() if c is not model.current)
    model.set_compile((other.compile_id, other.rank))
    model.set_compile((other.compile_id, other.rank))  # the same again: nothing to say
    assert seen == [("compile", other)] and model.current is other
    model.set_compile(("9/9", None))  # not in this session
    assert model.current is None and seen[-1] == ("compile", None)


def test_selection_relates_through_the_models_one_index(session: Session) -> None:
    model = AppModel()
    model.set_session(session)
    index = model.links
    assert model.links is index, "one index per session, not one per lookup"
    c = model.current
    assert c is not None
    ref = _first_kernel_node(c)
    model.selection.select({ref})
    related = model.selection.related
    assert related == index.related(ref) - {ref}
    kinds = {r.kind for r in related}
    assert RefKind.KERNEL in kinds and RefKind.DYNAMO_NODE in kinds and RefKind.SOURCE_LINE in kinds
    assert model.selection.highlighted == related | {ref}
    assert all(r.compile_id == c.compile_id for r in related if r.kind is not RefKind.SOURCE_LINE)


def test_history_goes_back_and_forward_and_a_new_session_forgets_it(session: Session) -> None:
    model = AppModel()
    model.set_session(session)
    first, second = (_first_kernel_node(c) for c in model.compiles())
    model.selection.select({first})
    model.selection.select({second})
    model.selection.back()
    assert model.selection.selected == {first} and model.selection.can_forward()
    model.selection.forward()
    assert model.selection.selected == {second}
    old_index = model.links
    model.set_session(session)
    assert model.links is not old_index, "a new session set builds its index anew"
    assert model.selection.selected == frozenset() and not model.selection.can_back()
    assert model.selection.related == frozenset()


def test_an_index_prepared_by_the_loader_is_kept_only_for_its_own_session(session: Session) -> None:
    model = AppModel()
    prepared = LinkIndex(session.links).prepare()
    model.set_session(session, links=prepared)
    assert model.links is prepared
    stale = LinkIndex(dict(session.links))  # equal content, but not this session's mapping
    model.set_session(session, links=stale)
    assert model.links is not stale and model.links.built_from(session.links)


def test_live_timeline_is_model_state(session: Session) -> None:
    recorded = load(FIXTURES / "timeline" / "transformer_cpu_timeline.json")
    model = AppModel()
    options: list[dict[str, object]] = []
    requests: list[dict[str, object]] = []
    model.timeline.options_changed.connect(options.append)
    model.timeline.run_requested.connect(requests.append)
    model.set_session(recorded)
    assert len(model.timeline.data.all_samples()) == len(recorded.timeline) == 600
    model.timeline.begin_run({"steps": 3, "modes": ["eager", "default"], "shape_change_step": None})
    assert model.timeline.data.all_samples() == [] and options[-1]["steps"] == 3
    model.timeline.add_record({"event": "sample", "mode": "eager", "step": 0, "ms": 1.5})
    assert [s.ms for s in model.timeline.data.all_samples()] == [1.5]
    model.timeline.request_run({"steps": 5})
    assert requests == [{"steps": 5}]
    model.set_session(session)  # a log without step times: the old run's samples go
    assert model.timeline.data.all_samples() == []


def test_the_loader_prepares_the_index_the_window_then_uses(session: Session, tmp_path: Path) -> None:
    """The loader thread builds the index once; the model takes that very object."""
    from compiler_core.session import save
    from explorer.actions.loading import load_prepared

    path = tmp_path / "s.json"
    save(session, path)
    loaded, links = load_prepared(path)
    model = AppModel()
    model.set_session(loaded, str(path), links)
    assert model.links is links and len(links) == len(session.links)


def test_selecting_items_of_another_compile_shows_that_compile(session: Session) -> None:
    """A graph break or node of [0/1] picked while [0/0] is shown switches to [0/1] (the panes
    had nothing of it to light); a selection that includes the shown compile keeps it, and a
    source line (no compile) never switches."""
    model = AppModel()
    model.set_session(session)
    shown = model.current
    assert shown is not None
    other = next(c for c in model.compiles() if c is not shown and c.dynamo_graph is not None)
    node = other.dynamo_graph.nodes[-2].name  # type: ignore[union-attr]
    theirs = Ref.dynamo_node(other.compile_id, node, other.rank)
    mine = _first_kernel_node(shown)
    model.selection.select({mine, theirs})
    assert model.current is shown
    model.selection.select({Ref.source_line("x.py", 1, None)})
    assert model.current is shown
    model.selection.select({theirs})
    assert model.current is other
    assert model.selection.selected == {theirs}  # switching kept what was picked
    model.selection.back()
    assert model.current is other  # a source line: no compile to follow
