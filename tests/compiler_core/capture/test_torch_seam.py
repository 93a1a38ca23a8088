"""The torch seam: private torch access lives only in `compiler_core/capture/hooks/`,
every hook declares the torch versions it serves, the installed torch is checked against them,
and every hook that changes torch state gives back exactly what it changed.

The static check reads the source (AST), so it also covers code paths no other test runs.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest
import torch

from compiler_core.capture import hooks

ROOT = Path(__file__).resolve().parents[3] / "compiler_core"
HOOKS_DIR = ROOT / "capture" / "hooks"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_torch_uses(source: str) -> list[str]:
    """Each private torch access in `source`: imports of `torch._x`, attribute chains through a
    name bound to torch with a private part, and assignments to / setattr on torch attributes.
    Plain strings (module names in log text, file paths) are allowed."""
    tree = ast.parse(source)
    torch_names = {"torch"}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "torch":
                    if any(_private(p) for p in parts):
                        found.append(f"{node.lineno}: import {alias.name}")
                    torch_names.add(alias.asname or "torch")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] == "torch" and (any(_private(p) for p in parts)
                                        or any(_private(a.name) for a in node.names)):
                found.append(f"{node.lineno}: from {node.module} import ...")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, base = [], node
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in torch_names:
                if any(_private(p) for p in chain):
                    found.append(f"{node.lineno}: {base.id}.{'.'.join(reversed(chain))}")
                elif isinstance(node.ctx, ast.Store | ast.Del):
                    found.append(f"{node.lineno}: assigns {base.id}.{'.'.join(reversed(chain))}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("setattr", "delattr") and node.args
              and isinstance(node.args[0], ast.Name) and node.args[0].id in torch_names):
            found.append(f"{node.lineno}: {node.func.id}(torch, ...)")
    return sorted(set(found))


def test_the_checker_sees_each_kind_of_private_access() -> None:
    assert private_torch_uses("import torch\ntorch._dynamo.reset()\n")
    assert private_torch_uses("from torch._inductor import config\n")
    assert private_torch_uses("import torch._functorch.config\n")
    assert private_torch_uses("import torch as t\nx = t._ops.OpOverload\n")
    assert private_torch_uses("from torch.foo import _bar\n")
    assert private_torch_uses("import torch\ntorch.compile = None\n")
    assert private_torch_uses("import torch\nsetattr(torch, 'compile', None)\n")
    # public API, dunders and strings naming private modules are fine
    assert not private_torch_uses(
        "import torch\nimport torch.fx\ntorch.compiler.reset()\nv = torch.__version__\n"
        "LOGGER = 'torch._inductor.select_algorithm'\n")


def test_no_private_torch_access_outside_the_hooks_package() -> None:
    offenders = {}
    for path in sorted(ROOT.rglob("*.py")):
        if HOOKS_DIR in path.parents:
            continue
        uses = private_torch_uses(path.read_text(encoding="utf-8"))
        if uses:
            offenders[str(path.relative_to(ROOT.parent))] = uses
    assert offenders == {}, "private torch access belongs in compiler_core/capture/hooks/"


def test_every_hook_module_is_listed_and_declares_its_versions() -> None:
    modules = {p.stem for p in HOOKS_DIR.glob("*.py") if p.stem != "__init__"}
    assert modules == set(hooks.HOOKS)
    for name in hooks.HOOKS:
        oldest, newest = hooks.declared_versions(name)
        assert hooks.parse_version(oldest) >= (2, 11), name
        assert hooks.parse_version(oldest) <= hooks.parse_version(newest), name


def test_the_installed_torch_is_within_every_hooks_range() -> None:
    assert hooks.check_torch_version() == []
    assert hooks.check_torch_version(str(torch.__version__)) == []


def test_a_torch_outside_the_ranges_is_one_notice_and_does_not_raise() -> None:
    (old,) = hooks.check_torch_version("2.10.0+cu128")
    assert old.startswith("torch 2.10.0+cu128 is outside") and "\n" not in old
    ranges = [hooks.declared_versions(name) for name in hooks.HOOKS]
    span = f"{min(ranges, key=lambda r: hooks.parse_version(r[0]))[0]} to " \
           f"{max(ranges, key=lambda r: hooks.parse_version(r[1]))[1]}"
    assert f"{len(hooks.HOOKS)} of {len(hooks.HOOKS)} hooks" in old and f"({span};" in old
    assert len(hooks.check_torch_version("3.0.0")) == 1
    assert len(hooks.check_torch_version("nightly")) == 1


# -- each state-changing hook restores what it changed --------------------------------------

def _logger_state(name_or_logger: str | logging.Logger) -> tuple[object, ...]:
    log = (name_or_logger if isinstance(name_or_logger, logging.Logger)
           else logging.getLogger(name_or_logger))
    return (log.level, log.propagate, tuple(log.handlers), log.__dict__.get("isEnabledFor"))


def test_trace_sink_restores_the_trace_logger(tmp_path: Path) -> None:
    from torch._logging._internal import trace_log

    from compiler_core.capture.hooks.trace_sink import TraceLogSink

    before = _logger_state(trace_log)
    with TraceLogSink(tmp_path / "t.log"):
        assert _logger_state(trace_log) != before
    assert _logger_state(trace_log) == before


def test_config_hooks_restore_every_value_they_patch() -> None:
    from torch._functorch import config as functorch_config
    from torch._inductor import config as inductor_config

    from compiler_core.capture.hooks.inspect_config import inspect_config, inspect_patches
    from compiler_core.capture.hooks.memory_budget_patch import activation_memory_budget

    def values() -> dict[str, object]:
        return {**{f"i.{k}": v for k, v in inductor_config.get_config_copy().items()},
                **{f"f.{k}": v for k, v in functorch_config.get_config_copy().items()}}

    before = values()
    with inspect_config():
        assert inspect_patches()[0]  # it did patch something
        assert inductor_config.trace.provenance_tracking_level == 1
    assert values() == before
    with activation_memory_budget(0.25):
        assert functorch_config.activation_memory_budget == 0.25
        assert inductor_config.fx_graph_cache is False
    assert values() == before


def test_stage_recorders_restore_passes_loggers_and_feedback_savers() -> None:
    from torch._inductor import config as inductor_config
    from torch._inductor import select_algorithm

    from compiler_core.capture.hooks.autotune_capture import _LOGGER
    from compiler_core.capture.hooks.cudagraph_capture import SKIP_LOGGERS, TREE_LOGGER
    from compiler_core.capture.hooks.stage_hooks import stage_recorders

    loggers = (_LOGGER, TREE_LOGGER, *SKIP_LOGGERS)

    def state() -> tuple[object, ...]:
        savers = tuple(select_algorithm.get_algorithm_selector_cache().feedback_saver_fns)
        return (inductor_config.joint_custom_pre_pass, inductor_config.post_grad_custom_pre_pass,
                savers, *(_logger_state(name) for name in loggers))

    before = state()
    with stage_recorders() as rec:
        assert inductor_config.joint_custom_pre_pass is not before[0]
        assert rec.autotune in select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
    after = state()
    assert after[0] is before[0] and after[1] is before[1]
    assert after == before


def test_compile_watch_removes_only_its_own_callbacks() -> None:
    from torch._dynamo.callback import callback_handler

    from compiler_core.capture.hooks.compile_watch import CompileWatch

    def other(args: object = None) -> None:
        return None

    callback_handler.register_start_callback(other)
    try:
        before = (list(callback_handler.start_callbacks), list(callback_handler.end_callbacks))
        with CompileWatch("default") as watch:
            assert watch.is_installed()
            assert len(callback_handler.start_callbacks) == len(before[0]) + 1
        assert not watch.is_installed()
        assert (callback_handler.start_callbacks, callback_handler.end_callbacks) == before
        with CompileWatch("default"):
            from compiler_core.capture.hooks.compiler_reset import reset_compiler

            reset_compiler()  # clears the lists under the watch: exit must not fail
        assert other not in callback_handler.start_callbacks
    finally:
        if other in callback_handler.start_callbacks:
            callback_handler.remove_start_callback(other)


def test_aot_record_watch_and_compile_hook_restore_what_they_replace() -> None:
    from torch._logging._internal import trace_log

    from compiler_core.capture.hooks.aot_replay import AotRecordWatch
    from compiler_core.capture.hooks.compile_hook import CompileHook

    before = _logger_state(trace_log)
    with AotRecordWatch() as watch:
        assert watch in trace_log.handlers
    assert _logger_state(trace_log) == before

    original = torch.compile
    with CompileHook(lambda result, _given: result):
        assert torch.compile is not original
    assert torch.compile is original


@pytest.mark.parametrize("name", hooks.HOOKS)
def test_hook_modules_import_without_side_effects_on_torch_compile(name: str) -> None:
    import importlib

    original = torch.compile
    importlib.import_module(f"compiler_core.capture.hooks.{name}")
    assert torch.compile is original
