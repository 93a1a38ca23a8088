"""Run a user's own, unmodified script under CompileScope's recording.

The script runs in the worker subprocess exactly as `python script.py ARGS` would run it
(`runpy`, `sys.argv`, its working directory), while every `torch.compile` it makes is recorded
through the same trace log a model-file capture writes, and every call of every compiled
callable is timed. Pieces, in pipeline order:

- `spec.py`: `ScriptSpec`, what to run; torch-free, shared by the CLI and the GUI.
- `compiler_core/capture/hooks/compile_hook.py` (in the torch seam, with the other private
  hooks): `torch.compile` wrapped for the run's duration.
- `step_timer.py`: step times of the user's own loop, streamed as timeline records.
- `script_job.py`: one process's run, start to saved session (or partial session).
- `rank_launcher.py`: `--nproc N`, the same under `torch.distributed.run`, ranks merged.
- `client.py`: `ScriptClient`, the CLI's handle on the worker (a `WorkerClient`).
"""
