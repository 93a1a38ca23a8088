"""Opening a saved session for the user: the codec's decode, then what an older file lacks that
only the builder's own code can derive (decomposition tables, analysis/decompositions.py), so the
views only ever look them up. A file the current builder wrote holds them: nothing is computed.

`compiler_core.session.load` is the decode alone, since the session layer imports nothing above
it; it serves files this build has just written (a worker's output, a re-run's session).
"""

from __future__ import annotations

import os

from compiler_core.analysis.decompositions import with_missing_decompositions
from compiler_core.session.codec import load, loads
from compiler_core.session.gc_pause import gc_paused
from compiler_core.session.model import Session


def open_session(path: str | os.PathLike[str]) -> Session:
    """The session in the file at `path`, as complete as the builder makes it today."""
    session = load(path)
    with gc_paused():
        return with_missing_decompositions(session)


def read_session(data: str | bytes) -> Session:
    """`open_session` for an encoded session already in memory (stdin, a test's text)."""
    session = loads(data)
    with gc_paused():
        return with_missing_decompositions(session)
