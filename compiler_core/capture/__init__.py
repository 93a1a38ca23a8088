"""Live capture: compile a model file under torch.compile and record every stage.

Pieces, in pipeline order: `trace_sink` (torch's structured trace → a tlparse-format log),
`inspect_config` (caches off, eager backward, kernel provenance), `recording_backend` (Inductor
wrapped through official hooks, logging each FX graph with full metadata as a
`compilescope_graph` artifact via `graph_records`; `post_grad_store` replays post-grad records
on FX graph cache hits), `model_run` (compile and call the model),
`stage_tracker` (trace records → progress events), `user_errors` (failures in the user's terms)
and `session_build` (trace log → Session through the shared builder). Only the worker process
imports the torch-side modules; `session_build` and `user_errors` are torch-free.

No torch internals are patched: every hook is a backend argument, a config flag or the trace
logger, so there is no `torch_patches` module (the design allowed one if it had been needed).
"""
