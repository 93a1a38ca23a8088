"""Script runs: `compiler_core run` believes only signed events and decides
success from what the parent can verify. Real, unmodified hostile scripts
(tests/fixtures/scripts), real worker processes, real torch.compile on CPU, the real CLI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler_core.cli import main as cli_main
from compiler_core.run.client import ScriptClient
from compiler_core.run.spec import ScriptSpec
from compiler_core.session.codec import load
from compiler_core.worker import event_auth, protocol
from tests.conftest import FIXTURES

Capture = pytest.CaptureFixture[str]
SCRIPTS = FIXTURES / "scripts"
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _cli_run(tmp_path: Path, script: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    out = tmp_path / "s.json"
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        code = cli_main(["run", "-q", "--timeout", "400", *extra, "-o", str(out), str(SCRIPTS / script)])
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().err


def _verdict(err: str) -> str:
    """The CLI's verdict line (the script's own stderr is echoed before it)."""
    return next((line for line in err.splitlines() if line.startswith(("error:", "session written"))), "")


def test_an_honest_script_still_succeeds(tmp_path: Path, capsys: Capture) -> None:
    code, err = _cli_run(tmp_path, "shape_change.py", capsys)
    assert code == 0, err
    assert f"session written to {(tmp_path / 's.json').resolve()}" in err
    spec = ScriptSpec(str(SCRIPTS / "shape_change.py"), str(tmp_path / "t.json"), cwd=str(tmp_path))
    client = ScriptClient(spec, timeout_s=400, echo=False)
    client.run()
    assert client.succeeded and client.forged_lines == 0 and client.done is not None, client.problems()


def test_os_exit_zero_after_a_compile_is_not_a_success(tmp_path: Path, capsys: Capture) -> None:
    code, err = _cli_run(tmp_path, "exits_early.py", capsys)
    assert code == protocol.EXIT_USER_ERROR, err
    first = _verdict(err)
    assert first.startswith("error: run failed") and "without finishing its protocol" in first, err
    assert "session written to" not in err
    # what it compiled is still kept, as a partial session
    assert "partial session (1 compiles)" in err and load(tmp_path / "s.json").compiles


def test_fake_events_on_inherited_fds_are_not_believed(tmp_path: Path, capsys: Capture) -> None:
    code, err = _cli_run(tmp_path, "forges_events.py", capsys)
    assert code == protocol.EXIT_USER_ERROR, err
    assert "were not written by it" in err and "session written to" not in err, err
    assert _verdict(err).startswith("error: run failed"), err


def test_closing_the_event_channel_is_not_a_success(tmp_path: Path, capsys: Capture) -> None:
    code, err = _cli_run(tmp_path, "closes_channel.py", capsys)
    assert code != 0, err
    assert _verdict(err).startswith("error: run failed") and "session written to" not in err, err


def test_a_rank_that_exits_early_fails_the_run(tmp_path: Path, capsys: Capture) -> None:
    code, err = _cli_run(tmp_path, "rank_exits_early.py", capsys, "--nproc", "2")
    assert code == protocol.EXIT_USER_ERROR, err
    assert "rank(s) [1] ended without finishing" in err and "session written to" not in err, err


def test_rank_lines_verify_per_rank_with_their_own_key_and_sequence(tmp_path: Path) -> None:
    keys = event_auth.write_rank_keys(str(tmp_path), 2)
    assert event_auth.read_rank_key(str(tmp_path), 1) == keys[1] and not (tmp_path / "rank_1").exists()
    sign0, sign1 = event_auth.rank_signer(keys[0], 0), event_auth.rank_signer(keys[1], 1)
    verifier = event_auth.RankVerifier(keys)
    a0, a1, b0 = sign0('{"kind": "a"}'), sign1('{"kind": "a"}'), sign0('{"kind": "b"}')
    assert verifier.check(a1) == (1, '{"kind": "a"}')  # ranks interleave: own sequence each
    assert verifier.check(a0) == (0, '{"kind": "a"}')
    assert verifier.check(a0) is None  # replayed
    assert verifier.check("1" + b0[1:]) is None  # rank 0's line claimed for rank 1
    assert verifier.check("7" + b0[1:]) is None and verifier.check('{"kind": "done"}') is None
    assert verifier.check(b0) == (0, '{"kind": "b"}')
    assert verifier.forged == 4 and verifier.first_forged
