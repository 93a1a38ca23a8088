"""The torch seam: every private torch access of CompileScope lives in this package.

One small module per hook. Each declares the torch versions it was written and tested for as
`TORCH_VERSIONS = (oldest, newest)` ("major.minor", both inclusive); a hook that changes torch
state (a logger, a config value, a callback list, a cache) is a context manager that restores
exactly what it changed on exit. Nothing outside this package may name `torch._*` (enforced by
`tests/compiler_core/capture/test_torch_seam.py`); public torch APIs are used everywhere else.

`HOOKS` lists the modules; `check_torch_version()` runs at capture start (worker capture job,
script run) and returns one notice when some hook's range does not include the installed torch:
the capture goes on (most private APIs survive a minor release) and the notice lands in the
session's diagnostics as `info`, so a wrong-looking stage can be traced to an untested torch
without every capture reading as damaged input.

Importing this package never imports torch (the viewer imports `compiler_core` without it).
"""

from __future__ import annotations

import importlib
import re

#: Hook modules (in pipeline order), each with its `TORCH_VERSIONS`.
HOOKS = (
    "trace_sink",          # torch.__trace logger -> a tlparse-format file (handler, level, isEnabledFor)
    "interned_strings",    # the structured trace's intern table (read only)
    "inspect_config",      # Inductor/functorch config: caches off, eager backward, provenance
    "recording_backend",   # Inductor wrapped with post-grad/AOT recorders (compile_fx, config patches)
    "post_grad_store",     # post-grad records replayed on FX-graph cache hits (Inductor cache dir)
    "aot_replay",          # AOT-level records replayed on AOTAutograd cache hits (trace_log watch)
    "stage_hooks",         # the one context manager for the stage recorders below
    "decomp_capture",      # pre-joint graph pass: op -> ATen/prims decompositions
    "autotune_capture",    # select_algorithm: autotuning choices and timings
    "cudagraph_capture",   # cudagraph-trees skip/record reasons (private loggers' text)
    "memory_budget_patch",  # functorch activation_memory_budget + caches off
    "hint_config",         # a re-run's hint: memory budget, logging functions (set from our env)
    "compile_watch",       # Dynamo compile start/end callbacks and guard failures
    "compile_hook",        # torch.compile itself wrapped for a script run (restored on exit)
    "compiler_reset",      # torch.compiler.reset (public)
    "inductor_entry",      # compile_fx for custom backends, list_mode_options
    "op_types",            # OpOverload / OpOverloadPacket isinstance test
    "process_state",       # read-only probes: modes, profiler, hooks, frame callback (timing checks)
)

_VERSION = re.compile(r"^(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int]:
    """'2.13.0+cpu' -> (2, 13); raises ValueError for a string with no major.minor."""
    found = _VERSION.match(text.strip())
    if found is None:
        raise ValueError(f"not a torch version: {text!r}")
    return int(found.group(1)), int(found.group(2))


def declared_versions(name: str) -> tuple[str, str]:
    """The `TORCH_VERSIONS` of hook module `name` (validated: two 'major.minor', oldest first)."""
    module = importlib.import_module(f"{__name__}.{name}")
    declared = getattr(module, "TORCH_VERSIONS", None)
    if not (isinstance(declared, tuple) and len(declared) == 2
            and all(isinstance(v, str) for v in declared)):
        raise TypeError(f"hook {name} must declare TORCH_VERSIONS = ('oldest', 'newest')")
    if parse_version(declared[0]) > parse_version(declared[1]):
        raise ValueError(f"hook {name}: TORCH_VERSIONS {declared} is not oldest-first")
    return declared[0], declared[1]


def check_torch_version(version: str | None = None) -> list[str]:
    """One notice when some hook's range does not include `version` (default: the installed
    torch), else none. A notice, not a warning per hook: most private APIs survive a minor
    release, and nothing is known to be wrong until a stage looks wrong."""
    if version is None:
        import torch

        version = str(torch.__version__)
    try:
        installed = parse_version(version)
    except ValueError:
        return [f"torch version {version!r} not understood: private torch hooks are unchecked"]
    outside = []
    for name in HOOKS:
        oldest, newest = declared_versions(name)
        if not parse_version(oldest) <= installed <= parse_version(newest):
            outside.append((name, oldest, newest))
    if not outside:
        return []
    ranges = sorted({f"{oldest} to {newest}" for _, oldest, newest in outside})
    return [f"torch {version} is outside the versions CompileScope's capture hooks were tested with "
            f"({', '.join(ranges)}; {len(outside)} of {len(HOOKS)} hooks): if a stage looks missing "
            "or wrong, that may be why"]
