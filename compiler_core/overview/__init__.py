"""The Overview: what a session or log says about the compile's health and what to fix first.

`build_overview(session)` gives an `Overview` (a verdict line and sections of facts, each with
the refs a click selects); `report_html.write_report` writes it, with the ranked tables, as one
self-contained HTML file. Qt-free and torch-free: the GUI, the CLI and the report read the same
values.
"""

from __future__ import annotations

from compiler_core.overview.model import Fact, Level, Overview, Section
from compiler_core.overview.overview_facts import build_overview

__all__ = ["Fact", "Level", "Overview", "Section", "build_overview"]
