"""The torch.compile hook in-process: what the script gets back, what is timed, what is restored.
Backend "eager" keeps these fast (no Inductor); the recording backend is exercised by the
script-run tests."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from compiler_core.capture.hooks.compile_hook import CompileHook, recording_kwargs
from compiler_core.run.step_timer import StepTimer, StopRun, callable_label


def _timer(records: list[dict[str, Any]], max_steps: int | None = None) -> StepTimer:
    return StepTimer("cpu", records.append, max_steps=max_steps)


def test_hook_restores_torch_compile_and_keeps_module_identity() -> None:
    torch.compiler.reset()  # a module compiled earlier in this process makes the first a recompile
    original = torch.compile
    records: list[dict[str, Any]] = []
    timer = _timer(records)
    model = torch.nn.Linear(4, 2)
    with CompileHook(timer.wrap):
        assert torch.compile is not original
        compiled = torch.compile(model, backend="eager")
        assert isinstance(compiled, torch.nn.Module) and compiled._orig_mod is model
        assert set(compiled.state_dict()) == {"_orig_mod.weight", "_orig_mod.bias"}
        for _ in range(3):
            compiled(torch.randn(3, 4))
        model2 = torch.nn.Linear(4, 2)
        model2.compile(backend="eager")  # nn.Module.compile goes through torch.compile too
        model2(torch.randn(3, 4))

        @torch.compile(backend="eager")
        def step(x: torch.Tensor) -> torch.Tensor:
            return x * 2

        step(torch.ones(2))
    assert torch.compile is original
    samples, events, stats = timer.finish()
    counts = {s.mode: s.samples for s in stats}
    assert counts == {"Linear": 3, "Linear#2": 1,
                      "test_hook_restores_torch_compile_and_keeps_module_identity.step": 1}
    assert [e.kind for e in events if e.mode == "Linear"] == ["compile"]
    assert samples[0].warmup and not samples[1].warmup
    assert records[0] == {"event": "mode_start", "mode": "Linear", "steps": 0}


def test_max_steps_raises_stop_run_past_the_limit() -> None:
    timer = _timer([], max_steps=2)
    with CompileHook(timer.wrap):
        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(1))
        f(torch.ones(1))
        with pytest.raises(StopRun, match="max-steps 2"):
            f(torch.ones(1))
        try:
            f(torch.ones(1))
        except Exception:  # a script's own `except Exception` must not swallow the stop
            pytest.fail("StopRun was caught as an Exception")
        except StopRun:
            pass


def test_only_plain_inductor_is_swapped_for_the_recording_backend() -> None:
    assert type(recording_kwargs({})["backend"]).__name__ == "RecordingBackend"
    assert type(recording_kwargs({"mode": "max-autotune"})["backend"]).__name__ == "RecordingBackend"
    assert recording_kwargs({"backend": "eager"}) == {"backend": "eager"}
    aoti = {"options": {"use_aoti": True}}
    assert recording_kwargs(aoti) is aoti


def test_callable_labels() -> None:
    model = torch.nn.GELU()
    assert callable_label(model) == "GELU"
    assert callable_label(model._call_impl) == "GELU"
    assert callable_label(test_callable_labels) == "test_callable_labels"


def test_alternating_callables_both_stream_before_the_end() -> None:
    """A loop alternating model and optimizer step must stream both series, not one."""
    records: list[dict[str, Any]] = []
    timer = _timer(records)
    with CompileHook(timer.wrap):
        f = torch.compile(lambda x: x + 1, backend="eager")
        g = torch.compile(lambda x: x * 2, backend="eager")
        for _ in range(20):
            f(torch.ones(1))
            g(torch.ones(1))
    streamed = [r["mode"] for r in records if r["event"] == "sample"]
    first, second = timer.series
    assert second == first + "#2"
    assert streamed.count(first) >= 16 and streamed.count(second) >= 16
    timer.finish()


def test_run_started_by_torchrun_is_refused_with_the_nproc_hint(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from compiler_core.cli import main as cli_main

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert cli_main(["run", __file__]) == 2
    assert "--nproc N" in capsys.readouterr().err
