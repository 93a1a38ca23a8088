"""Look up a log's sources on this machine, when the user asks (the Source pane's checkbox).

A log or session made elsewhere shows the lines it quotes and reads no file here
(compiler_core/analysis/source_lookup.py says why). Ticking "Look up sources on this machine" asks
the model for a lookup; this controller reads the files off the GUI thread, under the roots the
core allows (the log's folder, this environment's packages and stdlib, folders the user added),
and hands the model the same session with the files that hold the log's quoted lines. Unticking
puts the quoted lines back. Nothing here touches a pane. Saving asks before it writes files read
this way into the session (`ask_include_sources`; the codec leaves them out by default).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from compiler_core.analysis.source_lookup import SourceLookup
from compiler_core.analysis.user_sources import with_local_sources
from compiler_core.session import Session, SourceOrigin
from compiler_core.session.source_quotes import without_local_sources
from explorer.jobs import Lane
from explorer.plain_text import clip
from explorer.state import SessionState
from explorer.state.app_model import SourceLookupRequest


def lookup_for(session: Session, source_path: str, roots: tuple[str, ...]) -> SourceLookup:
    """The roots of a lookup for the shown session: the folder of the file it was opened from
    (the log, or the saved session), else of the log it was imported from."""
    return SourceLookup.for_log(source_path or session.meta.origin_path, roots)


class SourceLookups(QObject):
    """Answers the model's `source_lookup_requested`; one lookup at a time (the latest wins)."""

    def __init__(self, state: SessionState, parent: QObject | None = None) -> None:
        super().__init__(parent if parent is not None else state)
        self.state = state
        self._work = Lane(self, "source-lookup")
        state.updates.track(self._work)  # `flush` waits for a lookup too
        state.model.source_lookup_requested.connect(self.request)

    def request(self, request: SourceLookupRequest) -> None:
        model = self.state.model
        shown = model.session
        if not request.on:
            self._work.cancel()
            model.set_sources(without_local_sources(shown), request)
            return
        lookup = lookup_for(shown, model.source_path, request.roots)

        def apply(result: Session) -> None:
            if model.session.compiles is shown.compiles:  # still the session it was read for
                model.set_sources(result, request)

        # from the log's quotes each time: a file found under an earlier root set stays found
        self._work.submit(lambda: with_local_sources(without_local_sources(shown), lookup), apply)

    def busy(self) -> bool:
        return self._work.busy()

    def shutdown(self) -> None:
        self._work.shutdown()


def ask_include_sources(parent: QWidget, session: Session) -> bool | None:
    """Whether the files read from this machine go into the saved session (No unless the user
    says so); None when the save is cancelled. Asks nothing when no file was read that way."""
    looked_up = sorted(p for p, o in session.source_origins.items() if o == SourceOrigin.LOOKUP)
    if not looked_up:
        return False
    buttons = QMessageBox.StandardButton
    box = QMessageBox(QMessageBox.Icon.Question, "Include sources read from this machine?", "",
                      buttons.Yes | buttons.No | buttons.Cancel, parent)  # fmt: skip
    box.setTextFormat(Qt.TextFormat.PlainText)
    n = len(looked_up)
    listed = "\n".join(looked_up[:12]) + ("\n…" if n > 12 else "")
    box.setText(clip(f"{n} source file{'s' * (n != 1)} of this session {'were' if n != 1 else 'was'} read "
                     "from this machine. Include them in the saved file? Without them the file keeps the "
                     f"lines the log quotes.\n\n{listed}"))
    box.setDefaultButton(buttons.No)
    answer = box.exec()
    return None if answer == buttons.Cancel else answer == buttons.Yes
