"""The memory-budget lever, as its clients see it: a sweep's worker spec and its `budget` events
decoded. The sweep itself runs in the capture worker (worker/budget_job.py): torch never loads
in the CLI or the GUI, and the sweep gets the capture's memory cap, process sweep and signed
events. Each finished budget is one `budget` event; the model's own stdout cannot forge one,
and the client stores points only from an authentic run.

This package sits above `worker/` (the spec is the worker's `CaptureSpec`), beside the other
clients of a worker run.
"""

from __future__ import annotations

from typing import Any

from compiler_core.session.model import BudgetPoint


def point_from_event(data: dict[str, Any]) -> BudgetPoint | None:
    """A `budget` event's data → its BudgetPoint (None when it does not fit); torch-free."""
    from compiler_core.session.wire import BadValueError, checked

    try:
        point: BudgetPoint = checked(BudgetPoint, data)
    except BadValueError:
        return None
    return point


def budget_spec(model: str, budgets: str, device: str, steps: int, out_path: str) -> Any:
    """The worker spec of a sweep, for the CLI and the GUI alike (`out_path`: where the client
    stores the points; the worker writes no session)."""
    import os

    from compiler_core.worker.protocol import CaptureSpec

    return CaptureSpec(model_path=os.path.abspath(model), out_path=os.path.abspath(out_path), device=device,
                       steps=steps, budgets=budgets, input_steps=0)
