"""Well-typed but meaningless references: `links` entries that are no ref, and kernel `line_nodes`
keys that are no line number. The type check lets them through (they are strings); clicking
through the real window must not raise (a `ValueError` in every selection reaching one)."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from compiler_core.session import Ref, RefKind, dumps, load, loads
from compiler_core.session.links import decode_or_none
from explorer.main_window import MainWindow
from tests.conftest import FIXTURES
from tests.security.session_fuzz import show_in, slot_errors


def test_undecodable_links_and_line_keys_are_skipped(qtbot: QtBot, window: MainWindow) -> None:
    base = load(FIXTURES / "transformer_block.json")
    c = base.compiles[0]
    keys = ("abc", "-5", "99999999999", "3")
    inductor = tuple(dataclasses.replace(part, kernels=tuple(
        dataclasses.replace(k, line_nodes={key: k.fused_nodes[:1] for key in keys})
        for k in part.kernels)) for part in c.inductor)  # fmt: skip
    links = dict(base.links)
    links["garbage"] = ("more|garbage", "x")
    for key in list(links)[:50]:
        links[key] = (*links[key], "kernel|0/0|nope|zz", "source_line||0/0|f.py:x")
    compiles = (dataclasses.replace(c, inductor=inductor), *base.compiles[1:])
    hostile = dataclasses.replace(base, compiles=compiles, links=links)
    session = loads(dumps(hostile))  # through the file: the type check lets them through
    app = QApplication.instance()
    show_in(window, app)(session)
    current = window.state.current
    assert current is not None
    with slot_errors() as seen:
        for part in current.inductor:
            for k in part.kernels[:6]:
                cid = current.compile_id
                window.selection.select({Ref.kernel(cid, k.graph, k.name)})
                for n in k.fused_nodes[:2]:
                    window.selection.select({Ref.post_grad_node(cid, k.graph, n)})
                app.processEvents()
        for line in range(1, 60):
            window.panes["SourcePane"].view.lineClicked.emit(line)  # type: ignore[attr-defined]
    assert not seen, seen
    assert window.selection.highlighted  # the valid links still work

def test_decode_or_none() -> None:
    assert decode_or_none("kernel|0/0|x|y") is None and decode_or_none("source_line||0/0|f.py:x") is None
    assert decode_or_none("source_line||0/0|f.py:3") == Ref(RefKind.SOURCE_LINE, "0/0", name="f.py", line=3)
