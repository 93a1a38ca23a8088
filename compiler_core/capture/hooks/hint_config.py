"""Config a re-run sets inside the worker because torch reads no environment variable for it.

"Apply a hint and re-run" (compiler_core/diff/hint_plan.py) reaches most settings through the
environment torch already reads. Three have no such variable, so the plan sets one of ours and
the worker applies it here, around the whole capture:

- `COMPILESCOPE_ACTIVATION_MEMORY_BUDGET=0.5`: `torch._functorch.config.activation_memory_budget`
  (0..1), read by the partitioner each time a training graph is split. Both AOTAutograd's and
  Inductor's caches stay on: the budget is part of AOTAutograd's cache key
  (`config.save_config()`), so a run at another budget misses and partitions afresh.
- `COMPILESCOPE_REORDERABLE_LOGGING=builtins.print`: added to
  `torch._dynamo.config.reorderable_logging_functions`; Dynamo then moves the call after the graph
  instead of breaking it. Only plain functions qualify: Dynamo checks
  `isinstance(fn, FunctionType | BuiltinFunctionType)`, so `logger.info` (a bound method) is never
  reordered (as of torch 2.13).
- `COMPILESCOPE_IGNORED_LOGGING=logging.Logger.info`: added to
  `torch._dynamo.config.ignore_logging_functions` (`ignore_logger_methods` before it was renamed),
  the set Dynamo's own break hint names for a Logger method: the call is skipped under compile.

Only the dotted names below resolve, from a fixed table (no import by name): a hint can never
add an arbitrary callable. A value the table does not know, or a budget outside [0, 1], raises
ValueError, so the capture fails with that message rather than running without the setting.

Serves torch 2.11 - 2.15 (the config names exist there; `ignore_logging_functions` falls back to
`ignore_logger_methods`); written and tested on 2.13. `config.patch` restores on exit, also when
the block raises. Importing this module never imports torch (the plan reads its names).
"""

from __future__ import annotations

import builtins
import logging
import os
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

TORCH_VERSIONS = ("2.11", "2.15")  # oldest, newest served (see the package docstring)

ENV_MEMORY_BUDGET = "COMPILESCOPE_ACTIVATION_MEMORY_BUDGET"
ENV_REORDERABLE = "COMPILESCOPE_REORDERABLE_LOGGING"
ENV_IGNORED = "COMPILESCOPE_IGNORED_LOGGING"

#: Plain functions Dynamo can reorder after the graph, by the name a hint gives them.
REORDERABLE: dict[str, Callable[..., Any]] = {
    "builtins.print": builtins.print,
    "warnings.warn": warnings.warn,
    "logging.debug": logging.debug,
    "logging.info": logging.info,
    "logging.warning": logging.warning,
    "logging.error": logging.error,
}
#: Logger methods Dynamo can only skip (every Logger's call of that method, under compile).
IGNORABLE: dict[str, Callable[..., Any]] = {
    "logging.Logger.debug": logging.Logger.debug,
    "logging.Logger.info": logging.Logger.info,
    "logging.Logger.warning": logging.Logger.warning,
    "logging.Logger.error": logging.Logger.error,
}


def budget_value(text: str) -> float:
    """`text` as an activation memory budget; ValueError unless a number in [0, 1]."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"activation_memory_budget must be in [0, 1], got {text}")
    return value


def _functions(text: str, table: dict[str, Callable[..., Any]]) -> list[Callable[..., Any]]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(f"not a known logging function: {', '.join(unknown)} (one of {', '.join(table)})")
    return [table[n] for n in names]


@contextmanager
def hinted_config(environ: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """Apply the settings `environ` (default: this process's environment) asks for; yields
    them as `{config name: value}` for the session's meta (empty when none was asked)."""
    env = os.environ if environ is None else environ
    budget = env.get(ENV_MEMORY_BUDGET, "").strip()
    reorder = env.get(ENV_REORDERABLE, "").strip()
    ignore = env.get(ENV_IGNORED, "").strip()
    applied: dict[str, str] = {}
    with ExitStack() as stack:
        if budget:
            import torch._functorch.config as functorch_config

            value = budget_value(budget)
            stack.enter_context(functorch_config.patch(activation_memory_budget=value))
            applied["functorch.activation_memory_budget"] = str(value)
        if reorder or ignore:
            import torch._dynamo.config as dynamo_config

            if reorder:
                added = set(_functions(reorder, REORDERABLE))
                current = set(dynamo_config.reorderable_logging_functions)
                stack.enter_context(dynamo_config.patch(reorderable_logging_functions=current | added))
                applied["dynamo.reorderable_logging_functions"] = reorder
            if ignore:
                name = ("ignore_logging_functions" if hasattr(dynamo_config, "ignore_logging_functions")
                        else "ignore_logger_methods")  # fmt: skip
                skipped = set(_functions(ignore, IGNORABLE))
                stack.enter_context(dynamo_config.patch({name: set(getattr(dynamo_config, name)) | skipped}))
                applied[f"dynamo.{name}"] = ignore
        yield applied
