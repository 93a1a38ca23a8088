"""The one patch a script run needs: `torch.compile` wrapped while the user's script runs.

Why a patch: a script calls `torch.compile` itself, and torch offers no hook that sees each
call (the trace logger sees compiles, but not the callable the user gets back, which is what
we time). So for the run's duration `torch.compile` is replaced by a function that

- swaps the default backend ("inductor", without AOTInductor) for `RecordingBackend`, which is
  Inductor plus our recorders (recording_backend.py); `mode`/`options`/`dynamic` still reach
  it through torch's own `_TorchCompileWrapper`, as in a model-file capture. Other backends
  ("eager", "aot_eager", a user's own) are left alone: their Dynamo graphs are still in the
  trace log;
- hands the compiled result to `on_compiled(result, original)`, which returns what the
  script gets (the step timer wraps it).

Everything that compiles through `torch.compile` is covered: `torch.compile(model)`,
`@torch.compile` with or without arguments, `torch.compiler.compile`, and `nn.Module.compile()`
(which calls `torch.compile(self._call_impl)`), because all of them look `torch.compile` up at
call time. `torch._dynamo.optimize(...)` is not (it is private API; it still shows in the log).

Torch versions served: 2.11 to 2.15 (`torch.compile(model=None, *, fullgraph, dynamic,
backend, mode, options, disable, ...)`; keyword arguments are passed through untouched, so
newer keywords keep working). `__exit__` restores the original `torch.compile`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import TracebackType
from typing import Any

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

OnCompiled = Callable[[Any, Any], Any]  # (compiled result, the model/function given) -> result


class CompileHook:
    """Context manager: while open, `torch.compile` records and hands results to `on_compiled`."""

    def __init__(self, on_compiled: OnCompiled) -> None:
        self._on_compiled = on_compiled
        self._original: Callable[..., Any] | None = None
        self.calls = 0

    def __enter__(self) -> CompileHook:
        import torch

        self._original = torch.compile
        torch.compile = self._wrap(torch.compile)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        import torch

        if self._original is not None:
            torch.compile = self._original
            self._original = None

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def compile(model: Any = None, **kwargs: Any) -> Any:
            if model is None:  # `@torch.compile(mode=...)`: torch returns a decorator; so do we
                return lambda fn: compile(fn, **kwargs)
            self.calls += 1
            result = original(model, **recording_kwargs(kwargs))
            return self._on_compiled(result, model)

        return compile


def recording_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """torch.compile's keyword arguments with our recording backend in place of plain Inductor."""
    backend = kwargs.get("backend", "inductor")
    options = kwargs.get("options") or {}
    if backend != "inductor" or options.get("use_aoti"):
        return kwargs
    from compiler_core.capture.hooks.recording_backend import RecordingBackend

    return {**kwargs, "backend": RecordingBackend(dynamic=kwargs.get("dynamic"))}
