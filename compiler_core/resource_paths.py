"""Where the bundled examples and sessions are, in a checkout and in an installed wheel alike.

`resources/` sits at the project root (the product's layout) and is installed as the package
`compilescope_resources` (pyproject maps the one to the other), so the viewer finds its examples
after `pip install .` run from any directory. A plain checkout that was never installed falls back
to the folder beside this package. Stdlib only: the GUI imports this at start-up.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = "compilescope_resources"


def resources_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parent.parent / "resources"


def examples_dir() -> Path:
    return resources_dir() / "examples"


def sessions_dir() -> Path:
    return resources_dir() / "sessions"

