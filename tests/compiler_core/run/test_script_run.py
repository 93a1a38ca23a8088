"""Unmodified user scripts (tests/fixtures/scripts) run under `compiler_core run`: real worker
processes, real torch.compile on CPU, real sessions read back. Also the hook in-process."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path

import pytest

from compiler_core.cli import main as cli_main
from compiler_core.queries.summary import summarize
from compiler_core.run.client import ScriptClient
from compiler_core.run.spec import ScriptSpec
from compiler_core.session.codec import load
from compiler_core.worker import protocol
from tests.conftest import FIXTURES

SCRIPTS = FIXTURES / "scripts"
pytestmark = pytest.mark.slow


def _spec(script: str, tmp_path: Path, *args: str, **kw: object) -> ScriptSpec:
    return ScriptSpec(model_path=str(SCRIPTS / script), out_path=str(tmp_path / "s.json"),
                      script_args=tuple(args), cwd=str(tmp_path), **kw)  # type: ignore[arg-type]


def _run(spec: ScriptSpec, timeout: float = 400) -> ScriptClient:
    client = ScriptClient(spec, timeout_s=timeout, echo=False)
    client.run()
    return client


def _samples(session: object, mode: str) -> list[object]:
    return [s for s in session.timeline if s.mode == mode]  # type: ignore[attr-defined]


def test_training_script_with_argparse_dataloader_and_compiled_optimizer_step(tmp_path: Path) -> None:
    client = _run(_spec("train_loader.py", tmp_path, "--epochs", "1", "--batch-size", "32"))
    assert client.exit is not None and client.exit.ok, client.stderr_tail
    assert "epoch 0 loss" in client.stdout_tail  # argv reached the script's argparse
    assert (tmp_path / "s.json").is_file()  # relative paths resolve against the chosen cwd too
    session = load(tmp_path / "s.json")
    assert session.meta.origin == "script" and session.meta.extra["args"] == "--epochs 1 --batch-size 32"
    # 128 samples / 32 = 4 loop iterations: 4 calls of the model and 4 of the optimizer step
    assert len(_samples(session, "Sequential")) == 4
    assert len(_samples(session, "main.opt_step")) == 4
    assert _samples(session, "Sequential")[0].warmup  # type: ignore[attr-defined]
    assert not any(s.warmup for s in _samples(session, "Sequential")[1:])  # type: ignore[attr-defined]
    # the model (forward + backward) and the optimizer step are both in the session
    model = next(c for c in session.compiles if c.dynamo_graph and any(
        n.target.endswith("linear") for n in c.dynamo_graph.nodes))
    assert model.aot is not None and model.aot.forward is not None and model.aot.backward is not None
    step_graphs = [c for c in session.compiles if c.dynamo_graph and c is not model]
    assert any("add" in n.target or "foreach" in n.target
               for c in step_graphs for n in c.dynamo_graph.nodes)  # type: ignore[union-attr]
    assert str(SCRIPTS / "train_loader.py") in session.sources
    assert summarize(session)["timeline"]["Sequential"]["samples"] == 4


def test_shape_change_recompiles_and_max_steps_ends_cleanly(tmp_path: Path) -> None:
    # 8 planned calls, shape grows at call 4, the run stops after 6 calls of `f`
    client = _run(_spec("shape_change.py", tmp_path, "8", max_steps=6))
    assert client.exit is not None and client.exit.ok, client.stderr_tail
    assert "done" not in client.stdout_tail  # ended by --max-steps, not by the script
    session = load(tmp_path / "s.json")
    assert {"0/0", "0/1"} <= {c.compile_id for c in session.compiles}
    assert [s.step for s in _samples(session, "f")] == list(range(6))  # type: ignore[attr-defined]
    recompile = [e for e in session.timeline_events if e.kind == "recompile"]
    assert [e.step for e in recompile] == [4]
    assert "size mismatch" in recompile[0].reason
    assert _samples(session, "f")[4].warmup  # type: ignore[attr-defined]
    assert any("max-steps 6" in d.message for d in session.diagnostics)


def test_crash_midway_keeps_partial_session(tmp_path: Path) -> None:
    client = _run(_spec("crash_midway.py", tmp_path))
    assert client.exit is not None and client.exit.returncode == protocol.EXIT_USER_ERROR
    assert client.error is not None and "bad batch at step 3" in client.error.message
    assert "crash_midway.py" in client.error.traceback
    assert "step 3" in client.stdout_tail  # its prints went to stdout, not into the protocol
    session_event = next(e for e in client.received if e.kind == "session")
    assert session_event.data["partial"] is True
    session = load(tmp_path / "s.json")
    assert session.compiles and session.compiles[0].inductor
    assert len(_samples(session, "Linear")) == 4  # the steps before the crash are kept
    assert any(d.severity == "error" and "bad batch" in d.message for d in session.diagnostics)


def test_stop_ends_an_endless_forking_script_and_keeps_its_steps(tmp_path: Path) -> None:
    client = ScriptClient(_spec("endless.py", tmp_path), timeout_s=300, echo=False)
    stopped_at = None
    for event in client.events():
        if stopped_at is None and event.kind == "timeline" and event.data.get("event") == "sample" \
                and event.data.get("step", 0) >= 20:
            client.stop()
            stopped_at = time.monotonic()
    assert stopped_at is not None and time.monotonic() - stopped_at < 30
    assert client.exit is not None and client.exit.ok, client.stderr_tail  # a clean end
    session = load(tmp_path / "s.json")
    assert len(_samples(session, "<lambda>")) >= 20
    assert session.meta.extra["stopped"] == "stopped by the user"


def test_sys_exit_nonzero_is_a_failure_and_sys_exit_zero_is_not(tmp_path: Path) -> None:
    failing = _run(_spec("endless.py", tmp_path, "30", "3"))
    assert failing.exit is not None and failing.exit.returncode == protocol.EXIT_USER_ERROR
    assert failing.error is not None and "sys.exit(3)" in failing.error.message
    assert len(_samples(load(tmp_path / "s.json"), "<lambda>")) == 30
    clean = _run(_spec("endless.py", tmp_path, "10", "0"))
    assert clean.exit is not None and clean.exit.ok


def test_a_worker_killed_outright_still_leaves_a_session(tmp_path: Path) -> None:
    client = _run(_spec("dies_hard.py", tmp_path))
    assert client.exit is not None and client.exit.signal == 9
    session = client.recover_session()
    assert session is not None and session.meta.origin == "script"
    assert [c.compile_id for c in session.compiles] == ["0/0"] and session.compiles[0].inductor
    assert any("SIGKILL" in d.message for d in session.diagnostics)


def test_cli_run_then_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli.json"
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        code = cli_main(["run", "-q", "-o", str(out), str(SCRIPTS / "shape_change.py"), "--", "4"])
    finally:
        os.chdir(cwd)
    assert code == 0
    assert cli_main(["summary", str(out)]) == 0
    printed = capsys.readouterr().out
    assert re.search(r'"recompiles": 1', printed) and '"f"' in printed


def test_two_ranks_under_torchrun_merge_into_one_session(tmp_path: Path) -> None:
    client = _run(_spec("ddp_ranks.py", tmp_path, "--steps", "3", nproc=2, device="auto"), timeout=600)
    assert client.exit is not None and client.exit.ok, client.stderr_tail[-3000:]
    started = [e.data["rank"] for e in client.received if e.kind == "rank" and e.data["state"] == "started"]
    assert sorted(started) == [0, 1]
    assert "rank 1 of 2 done" in client.stdout_tail
    session = load(tmp_path / "s.json")
    assert session.meta.ranks == (0, 1)
    assert {(c.compile_id, c.rank) for c in session.compiles} >= {("0/0", 0), ("0/0", 1)}
    assert len(_samples(session, "r0:<lambda>")) == 3 and len(_samples(session, "r1:<lambda>")) == 3
    # the ranks say which clock timed their steps: the session names the device, not "auto"
    assert session.meta.device == "cpu" and "cpu" in session.meta.extra["clock"], session.meta


def test_a_hung_script_is_stopped_by_a_second_stop(tmp_path: Path) -> None:
    """Stop waits for the next compiled call; a script stuck elsewhere needs the second Stop,
    which interrupts it where it is. Both end cleanly with the session saved."""
    client = ScriptClient(_spec("hangs.py", tmp_path), timeout_s=300, echo=False)
    stops: list[float] = []

    def stop_twice() -> None:  # no event arrives while the script hangs: watch its output
        while "waiting forever" not in client.stdout_tail:
            time.sleep(0.2)
        for _ in range(2):
            client.stop()
            stops.append(time.monotonic())
            time.sleep(1.0)

    threading.Thread(target=stop_twice, daemon=True).start()
    client.run()
    assert len(stops) == 2 and client.exit is not None and client.exit.ok, client.stderr_tail
    assert not client.exit.timed_out
    session = load(tmp_path / "s.json")
    assert len(_samples(session, "<lambda>")) == 5
    assert "interrupted" in session.meta.extra["stopped"]


def test_a_forked_child_that_exits_through_the_script_reports_nothing(tmp_path: Path) -> None:
    client = _run(_spec("fork_exits.py", tmp_path))
    assert client.exit is not None and client.exit.ok, client.stderr_tail
    assert "child leaving" in client.stdout_tail and "parent done" in client.stdout_tail
    kinds = [e.kind for e in client.received]
    assert kinds.count("session") == 1 and kinds.count("done") == 1
    assert len(_samples(load(tmp_path / "s.json"), "<lambda>")) == 4  # the parent's calls only


@pytest.mark.parametrize("nproc", [1, 2])
def test_dataloader_workers_that_warn_and_log_never_fail_the_run(tmp_path: Path, nproc: int) -> None:
    """Forked DataLoader workers inherit the events channel; their warnings go to their stderr,
    never onto the channel as lines the parent would count as forged."""
    client = _run(_spec("loader_workers_warn.py", tmp_path, nproc=nproc), timeout=600)
    assert client.exit is not None and client.exit.ok, (client.problems(), client.stderr_tail[-3000:])
    assert client.forged_lines == 0 and not client.problems()
    assert "sample 0 is synthetic" in client.stderr_tail  # the children's warnings still printed
    assert client.stdout_tail.count("finished") == nproc
    warned = [e for e in client.received if e.kind == "warning" and "parent done" in e.message]
    assert len(warned) == nproc  # the script's own warning still reaches the app, once per rank
    session = load(tmp_path / "s.json")
    assert sum(len(_samples(session, m)) for m in {s.mode for s in session.timeline}) == 4 * nproc


def test_ddp_breaks_under_two_ranks_point_at_the_script_not_at_compilescope(tmp_path: Path) -> None:
    """DDPOptimizer's break and DDP's skipped context manager are placed at the script's own line,
    as plain torchrun shows them: never at the step timer wrapping the compiled module, the
    worker that launched the script or the standard library's contextlib."""
    client = _run(_spec("ddp_train.py", tmp_path, nproc=2), timeout=600)
    assert client.exit is not None and client.exit.ok, client.stderr_tail[-3000:]
    session = load(tmp_path / "s.json")
    breaks = [b for c in session.compiles for b in c.graph_breaks]
    assert {b.gb_code for b in breaks} >= {"GB0156"} and len({c.rank for c in session.compiles}) == 2
    script = str(SCRIPTS / "ddp_train.py")
    lines = Path(script).read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(lines) if "step's forward" in text)
    for brk in breaks:
        assert brk.location is not None and (brk.location.file, brk.location.line) == (script, line), brk
        assert brk.user_stack[0].file == script  # no launcher frames above the script
        assert not any("compiler_core" in f.file for f in brk.user_stack), brk.user_stack
    assert not any("compiler_core" in path for path in session.sources)


def test_auto_device_times_each_callable_by_its_tensors_and_says_which(tmp_path: Path) -> None:
    client = _run(_spec("train_loader.py", tmp_path, "--epochs", "1", "--batch-size", "32", device="auto"))
    assert client.exit is not None and client.exit.ok, client.stderr_tail
    assert "Sequential: step times on the cpu clock (no CUDA tensor in its calls)" in client.stderr_tail
    session = load(tmp_path / "s.json")
    assert session.meta.device == "cpu"
    assert "Sequential: cpu (no CUDA tensor in its calls)" in session.meta.extra["clock"]
    assert len(_samples(session, "Sequential")) == 4


def test_a_fork_chain_daemon_with_no_environment_is_swept_when_the_run_ends(tmp_path: Path) -> None:
    """Found by kinship, not by the run token it dropped: the run's client is the subreaper."""
    pid_file = tmp_path / "chain.pid"
    client = _run(_spec("fork_chain_daemon.py", tmp_path, str(pid_file)), timeout=300)
    assert client.exit is not None and client.exit.ok, client.stderr_tail
    assert client.swept  # the chain was found and killed
    time.sleep(1.0)
    last = int(pid_file.read_text())
    alive = Path(f"/proc/{last}").exists() and "Z" not in Path(f"/proc/{last}/stat").read_text().split()[2]
    assert not alive
    assert pid_file.read_text() == str(last)  # nothing of the chain wrote since


def test_a_cpu_script_runs_kernels_map_to_their_nodes(tmp_path: Path) -> None:
    """C++ kernels carry no Graph fragment: their nodes come from Inductor's provenance, which a
    script run now turns on as a capture does (every C++ kernel read 'No post-grad node maps')."""
    client = _run(_spec("train_loader.py", tmp_path, "--epochs", "1", "--batch-size", "32"))
    assert client.exit is not None and client.exit.ok, client.stderr_tail
    session = load(tmp_path / "s.json")
    forward = [k for c in session.compiles for o in c.inductor if o.graph != "backward"
               for k in o.kernels if k.language == "cpp"]  # fmt: skip
    assert forward and all(k.fused_nodes for k in forward)


def test_a_script_that_makes_the_output_path_a_folder_gets_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    code = cli_main(["run", "-q", "-o", str(out), str(SCRIPTS / "output_becomes_folder.py"), "--", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and "could not be written to" in err and "Traceback" not in err, err
    assert out.is_dir()
