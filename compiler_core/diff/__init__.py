"""Before and after: two sessions (from logs or captures) compared at every stage.

`diff_sessions(before, after)` gives a `SessionDiff` (plain dataclasses, `as_dict` for JSON,
`session_text` for people). Compiles are matched by frame and code location (compile_match.py),
graphs node by node by structure and name (graph_diff.py), everything else stage by stage
(stage_diff.py). Torch-free and Qt-free: the CLI, the GUI and the tests call the same code.
What is left to fix in a session and which hints a re-run can apply: fix_list.py and
hint_plan.py; the re-run itself (it starts capture workers) is hint_rerun.py, imported on its own.
"""

from compiler_core.diff.compile_match import CompileMatch, FrameKey, frame_key, match_compiles
from compiler_core.diff.diff_result import (
    BreakFact,
    Change,
    CompileDiff,
    GraphDiff,
    GroupMatch,
    KernelDiff,
    KernelSwap,
    LoneCompile,
    ModeDiff,
    NodeChange,
    RecompileFact,
    SavedDiff,
    SessionDiff,
    SideInfo,
    as_dict,
)
from compiler_core.diff.diff_text import session_text
from compiler_core.diff.fix_list import FixRow, fix_rows, session_hints
from compiler_core.diff.graph_diff import graph_diff, rows
from compiler_core.diff.hint_plan import Hint, RerunPlan, parse_hint, plan_for
from compiler_core.diff.session_diff import diff_sessions

__all__ = [
    "BreakFact",
    "Change",
    "CompileDiff",
    "CompileMatch",
    "FixRow",
    "FrameKey",
    "GraphDiff",
    "GroupMatch",
    "Hint",
    "KernelDiff",
    "KernelSwap",
    "LoneCompile",
    "ModeDiff",
    "NodeChange",
    "RecompileFact",
    "RerunPlan",
    "SavedDiff",
    "SessionDiff",
    "SideInfo",
    "as_dict",
    "diff_sessions",
    "fix_rows",
    "frame_key",
    "graph_diff",
    "match_compiles",
    "parse_hint",
    "plan_for",
    "rows",
    "session_hints",
    "session_text",
]
