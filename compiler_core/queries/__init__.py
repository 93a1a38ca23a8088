"""Torch-free lookups over a built session, for the CLI, the Overview and the panes alike.

Nothing here builds facts a session lacks (that is `analysis/`) or runs user code (that is
`capture/`, `timeline/` and `worker/`): each module joins what the session stores into what a
view shows. `decompositions` (the Decompositions pane's rows), `mode_compare` (modes side by
side), `step_stats` (step-time statistics, one way for the CLI, the session and the pane),
`break_ranking` / `recompile_explain` (breaks and recompiles, distinct and ranked), `summary`
(the CLI summary's facts, the ranks' among them).
"""
