"""The documented command line and event lines round-trip; the client side never needs torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from compiler_core.worker.protocol import CaptureSpec, Event, default_trace_path, worker_argv, worker_env
from compiler_core.worker.worker_main import build_parser, spec_from_args
from tests.conftest import ROOT


def test_worker_argv_parses_back_to_the_same_spec(tmp_path: Path) -> None:
    spec = CaptureSpec(model_path=str(tmp_path / "m.py"), out_path=str(tmp_path / "s.json"), device="cuda:1",
                       mode="max-autotune", dynamic=False, input_steps=2, steps=50, modes="eager,default")
    argv = worker_argv(spec, events_fd=7)
    assert argv[1:3] == ["-m", "compiler_core.worker"]
    args = build_parser().parse_args(argv[3:])
    assert args.events_fd == 7 and args.events_file is None
    parsed = spec_from_args(args)
    assert parsed == CaptureSpec(**{**spec.__dict__, "trace_path": default_trace_path(spec.out_path)})
    assert parsed.resolved_trace_path == str(tmp_path / "s.trace.log")


def test_events_omit_empty_fields_and_round_trip() -> None:
    event = Event("stage", t=1.5, stage="inductor", state="finished", compile_id="0/1", elapsed_s=0.25)
    line = event.to_json()
    assert json.loads(line) == {"kind": "stage", "t": 1.5, "stage": "inductor", "state": "finished",
                                "compile_id": "0/1", "elapsed_s": 0.25}
    assert Event.from_json(line) == event
    newer = '{"kind": "done", "exit_code": 0, "future_field": 1}'  # unknown fields are ignored
    assert Event.from_json(newer) == Event("done", exit_code=0)


def test_worker_env_points_inductor_and_tmpdir_into_the_cache(tmp_path: Path) -> None:
    env = worker_env({"PATH": "/bin"}, cache_dir=tmp_path / "cache")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "cache" / "inductor")
    assert env["TMPDIR"] == str(tmp_path / "cache" / "tmp")
    assert Path(env["TMPDIR"]).is_dir() and env["PATH"] == "/bin"


def test_client_and_cli_import_without_torch() -> None:
    code = ("import sys, compiler_core.worker.client, compiler_core.cli.capture_cmd, "
            "compiler_core.capture.session_build; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_events_file_channel_for_qprocess(tmp_path: Path) -> None:
    """The --events-file variant (what a QProcess launcher uses) carries the full sequence."""
    model = tmp_path / "broken.py"
    model.write_text("raise KeyError('no weights here')\n")
    events = tmp_path / "events.jsonl"
    spec = CaptureSpec(model_path=str(model), out_path=str(tmp_path / "s.json"))
    env = worker_env(cache_dir=tmp_path / "cache")
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(worker_argv(spec, events_file=str(events)), env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    got = [Event.from_json(line) for line in events.read_text().splitlines()]
    assert [e.kind for e in got] == ["hello", "warning", "stage", "stage", "error", "stage", "stage", "stage",
                                    "stage", "session", "done"]
    assert got[1].data["category"] == "memory_cap" and "not covered" in got[1].message
    stages = [(e.stage, e.state) for e in got if e.kind == "stage"]
    assert stages[:2] == [("load", "started"), ("load", "failed")]
    error = next(e for e in got if e.kind == "error")
    assert error.stage == "load" and error.message == "KeyError: 'no weights here'"
    assert got[-2].data["partial"] is True and got[-1].exit_code == 1
