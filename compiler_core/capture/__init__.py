"""Live capture: compile a model file under torch.compile and record every stage.

Pieces, in pipeline order: `hooks.trace_sink` (torch's structured trace → a tlparse-format log),
`hooks.inspect_config` (caches off, eager backward, kernel provenance), `hooks.recording_backend`
(Inductor wrapped, logging each FX graph with full metadata as a `compilescope_graph` artifact
via `graph_records`; `hooks.post_grad_store` and `hooks.aot_replay` replay records on cache
hits), `hooks.stage_hooks` (decompositions, autotuning, CUDA graphs), `model_run` (compile and
call the model), `stage_tracker` (trace records → progress events), `user_errors` (failures in
the user's terms) and `session_build` (trace log → Session through the shared builder). Only the
worker process imports the torch-side modules; `session_build` and `user_errors` are torch-free.

The torch seam: every private torch access of the whole engine (`torch._dynamo`, `_inductor`,
`_functorch`, `_logging`, `_guards`, private attributes, replacing torch attributes such as
`torch.compile` or `trace_log.isEnabledFor`, reading private loggers' text) lives in
`capture/hooks/`, one small module per hook. Each declares `TORCH_VERSIONS` (oldest, newest
served); each that changes torch state is a context manager that restores exactly what it
changed; `hooks.check_torch_version()` checks the installed torch against all of them at capture
start and puts a warning in the session when one is out of range. Everything outside `hooks/`
uses public torch only (tests/compiler_core/capture/test_torch_seam.py checks the source).
"""
