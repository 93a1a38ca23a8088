"""The model-file format: what a user's Python file must define, and clear errors when it doesn't.

A model file is plain Python that defines:

- ``model``: an ``nn.Module`` or a plain function (required);
- ``example_inputs``: a tuple of arguments, or a zero-argument function returning one (required);
- ``train_step(model, inputs)``: optional; when present the capture runs forward *and* backward,
  so AOTAutograd produces a joint graph and saved tensors;
- ``compile_options``: optional dict passed to ``torch.compile`` (e.g. ``{"dynamic": True}``);
- ``make_inputs(step)``: optional; inputs for a given step of a timeline run (shape changes);
- ``requires``: optional, e.g. ``"cuda"``: the file cannot run on other devices and says so.

Loading executes the file, so it happens in the worker process only. Torch is imported lazily.
"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

MINIMAL_MODEL_FILE = '''\
import torch

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU())
example_inputs = (torch.randn(8, 16),)

# optional: enables backward, so AOTAutograd shows the joint graph and saved tensors
def train_step(model, inputs):
    model(*inputs).sum().backward()
'''


class ModelFileError(Exception):
    """The file cannot serve as a model file. `str()` is a complete, user-facing message."""

    def __init__(self, path: str, problem: str, show_minimal: bool = True) -> None:
        self.path = path
        self.problem = problem
        text = f"{path}: {problem}"
        if show_minimal:
            text += "\n\nA minimal valid model file:\n\n" + MINIMAL_MODEL_FILE
        super().__init__(text)


class UnsupportedDeviceError(ModelFileError):
    """The file needs a device this machine lacks (e.g. a Triton custom op on a CPU-only box)."""


@dataclass
class ModelSpec:
    path: str
    model: Any
    example_inputs: Callable[[], tuple[Any, ...]]
    train_step: Callable[[Any, tuple[Any, ...]], Any] | None = None
    compile_options: dict[str, Any] = field(default_factory=dict)
    make_inputs: Callable[[int], tuple[Any, ...]] | None = None
    requires: str = ""
    doc: str = ""

    @property
    def trains(self) -> bool:
        return self.train_step is not None


def execute_file(path: str | Path) -> Any:
    """Run the file as a fresh module (registered in sys.modules so dataclasses/pickle work)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise ModelFileError(str(path), "no such file", show_minimal=False)
    name = f"compilescope_user_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelFileError(str(path), "not a Python file", show_minimal=False)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def validate_module(module: Any, path: str, device: str = "cpu") -> ModelSpec:
    """Check the module's names and types; raise ModelFileError naming everything missing."""
    import torch

    missing = [n for n in ("model", "example_inputs") if not hasattr(module, n)]
    if missing:
        raise ModelFileError(path, "missing required name(s): " + ", ".join(missing))
    requires = str(getattr(module, "requires", "") or "")
    if requires and not device.startswith(requires):
        raise UnsupportedDeviceError(
            path, f"this example needs device '{requires}' but the capture runs on '{device}'",
            show_minimal=False,
        )
    model = module.model
    if not (isinstance(model, torch.nn.Module) or callable(model)):
        raise ModelFileError(path, f"`model` must be an nn.Module or a function, got {type(model).__name__}")
    inputs = _inputs_factory(module.example_inputs, path)
    train_step = _optional_callable(module, "train_step", path)
    make_inputs = _optional_callable(module, "make_inputs", path)
    options = getattr(module, "compile_options", {}) or {}
    if not isinstance(options, dict):
        raise ModelFileError(path, f"`compile_options` must be a dict, got {type(options).__name__}")
    return ModelSpec(
        path=path, model=model, example_inputs=inputs, train_step=train_step,
        compile_options=dict(options), make_inputs=make_inputs, requires=requires,
        doc=(getattr(module, "__doc__", "") or "").strip(),
    )


def _inputs_factory(value: Any, path: str) -> Callable[[], tuple[Any, ...]]:
    if isinstance(value, tuple):
        return lambda: value
    if isinstance(value, list):
        return lambda: tuple(value)
    if callable(value):
        def call() -> tuple[Any, ...]:
            result = value()
            if not isinstance(result, tuple | list):
                raise ModelFileError(
                    path, f"`example_inputs()` must return a tuple, got {type(result).__name__}"
                )
            return tuple(result)
        return call
    raise ModelFileError(
        path, f"`example_inputs` must be a tuple or a function returning one, got {type(value).__name__}"
    )


def _optional_callable(module: Any, name: str, path: str) -> Callable[..., Any] | None:
    value = getattr(module, name, None)
    if value is not None and not callable(value):
        raise ModelFileError(path, f"`{name}` must be a function, got {type(value).__name__}")
    return value


def load_model_file(path: str | Path, device: str = "cpu") -> ModelSpec:
    module = execute_file(path)
    return validate_module(module, str(Path(path).resolve()), device)


def with_train_choice(spec: ModelSpec, train: bool | None) -> ModelSpec:
    """The spec as the user chose to run it: `train=False` drops the file's train_step (forward
    under no_grad, an inference graph); `train=True` on a file without one backpropagates the
    sum of the output; None keeps what the file says. Capture and timeline both follow it."""
    if train is None or train == spec.trains:
        return spec
    return replace(spec, train_step=_sum_backward if train else None)


def to_device(value: Any, device: str) -> Any:
    """A model file's inputs on `device`: tensors (nested in tuples, lists, dicts) moved there;
    everything else unchanged. Capture, timeline and budget runs all move inputs this way."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple | list):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def _sum_backward(model: Any, inputs: tuple[Any, ...]) -> Any:
    import torch

    out = model(*inputs)
    tensors = [t for t in (out if isinstance(out, tuple | list) else [out])
               if isinstance(t, torch.Tensor) and t.requires_grad]
    if tensors:
        torch.stack([t.float().sum() for t in tensors]).sum().backward()
    return out
