"""Inputs for each step of a run: the model file's `make_inputs(step)` or its example inputs,
moved to the run's device, and optionally grown by one along dim 0 from a chosen step on.

The growth simulates the classic production surprise (a last, smaller or larger, batch): every
tensor input gets one more row, copied from its last row, which fails Dynamo's size guards and
shows the recompile spike. Inputs are built outside the timed region of a step.
"""

from __future__ import annotations

from typing import Any

from compiler_core.modelfile import ModelSpec, to_device


def grow_batch(value: Any) -> Any:
    """Every tensor with a dim 0 gets one more row (its last row repeated)."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.dim() == 0:
            return value
        grown = torch.cat([value.detach(), value.detach()[-1:]], dim=0)
        return grown.requires_grad_(value.requires_grad)
    if isinstance(value, tuple | list):
        return type(value)(grow_batch(v) for v in value)
    if isinstance(value, dict):
        return {k: grow_batch(v) for k, v in value.items()}
    return value


def shapes(value: Any) -> list[tuple[int, ...]]:
    """Shapes of the tensors in `value`, for human-readable shape-change reasons."""
    import torch

    if isinstance(value, torch.Tensor):
        return [tuple(value.shape)]
    if isinstance(value, tuple | list):
        return [s for v in value for s in shapes(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in shapes(v)]
    return []


class StepInputs:
    """`inputs(step)`; fixed example inputs are built and moved once, then reused."""

    def __init__(self, spec: ModelSpec, device: str, shape_change_step: int | None = None) -> None:
        self.spec = spec
        self.device = device
        self.shape_change_step = shape_change_step
        self._fixed: Any = None
        self._grown: Any = None

    def changes_shape_at(self, step: int) -> bool:
        return self.shape_change_step is not None and step == self.shape_change_step

    def __call__(self, step: int) -> tuple[Any, ...]:
        grow = self.shape_change_step is not None and step >= self.shape_change_step
        if self.spec.make_inputs is not None:
            base = to_device(tuple(self.spec.make_inputs(step)), self.device)
            return grow_batch(base) if grow else base
        if self._fixed is None:
            self._fixed = to_device(tuple(self.spec.example_inputs()), self.device)
        if not grow:
            return tuple(self._fixed)
        if self._grown is None:
            self._grown = grow_batch(self._fixed)
        return tuple(self._grown)

    def shape_change_reason(self, step: int) -> str:
        before, after = shapes(self(step - 1) if step > 0 else self._base(step)), shapes(self(step))
        return f"batch dim +1 from step {step}: {_fmt(before)} → {_fmt(after)}"

    def _base(self, step: int) -> tuple[Any, ...]:
        if self.spec.make_inputs is not None:
            return tuple(self.spec.make_inputs(step))
        return tuple(self.spec.example_inputs())


def _fmt(shape_list: list[tuple[int, ...]]) -> str:
    return ", ".join("(" + ", ".join(str(d) for d in s) + ")" for s in shape_list) or "no tensors"
