"""Pay the GUI's once-per-process costs in a thread while the window is idle after startup.

Two of them would otherwise land on the GUI thread the first time a session is shown, inside one
event-loop turn: compiling Pygments' regex tables and the lazy imports the layout's
numpy calls make (`np.unique` imports `numpy.ma`). Both are module-level, so doing them
once anywhere in the process is enough. It runs as a detached job of the GUI's job service
(explorer/jobs.py).
"""

from __future__ import annotations

from concurrent.futures import Future

from compiler_core.session.model import Graph, Node
from compiler_core.session.vocab import GraphKind
from explorer.canvas.layout_job import full_layout
from explorer.jobs import service
from explorer.layout.graph_arrays import from_sections
from explorer.panes.syntax import lexer_for

_TINY = Graph(
    GraphKind.DYNAMO,
    (
        Node("x", "placeholder"),
        Node("y", "call_function", "torch.relu", ("x",), module_path="a/b"),
        Node("z", "call_function", "torch.add", ("x", "y"), module_path="a"),
        Node("output", "output", "output", ("z",)),
    ),
)


def _warm() -> None:
    for language in ("python", "cpp"):
        list(lexer_for(language).get_tokens("def f(x):\n    return x  # c\n"))
    full_layout(lambda: from_sections([(_TINY, "warm-up")]), 300)


def warm_up() -> Future[None]:
    return service().run_detached(_warm)
