"""The memory-budget lever's client half (`memory_budget`: a sweep's worker spec and its events
decoded), for the CLI and the GUI alike.

It sits above `worker/` (its spec is the worker's `CaptureSpec`; the sweep itself is
`worker/budget_job.py`). The other stage modules found their layers: the artifact readers
(autotuning, CUDA graphs, decompositions' stage artifacts) are `analysis/`, the lookups the stage
panes show are `queries/`, the capture-side recorders are the torch seam,
`capture/hooks/`.
"""
