"""How a compile's status reads in the GUI.

`cache_hit` is not a problem: a warm capture replays the cached compile's records, so its graphs,
kernels and code are all there; the only difference is that Inductor skipped the work. It reads
"ok (cached)" wherever a status is shown; only `failed` is a problem.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler_core.session import Compile

STATUS_TEXT = {"cache_hit": "ok (cached)"}  # the others read as they are spelt


def status_text(status: str) -> str:
    return STATUS_TEXT.get(status, status)


def is_problem(status: str) -> bool:
    return status == "failed"


def status_summary(compiles: Iterable[Compile]) -> str:
    """E.g. "3 compiles (2 cached, 1 failed)": only the counts that are not plain ok."""
    statuses: list[str] = [c.status for c in compiles]
    cached, failed = statuses.count("cache_hit"), statuses.count("failed")
    extra = [f"{cached} cached" if cached else "", f"{failed} failed" if failed else ""]
    noted = ", ".join(e for e in extra if e)
    return f"{len(statuses)} compiles" + (f" ({noted})" if noted else "")
