"""Folders as users hand them over: a cluster job's host folders, tlparse's output folder.

Built in tmp_path from real logs: the 2-rank DDP run of bench/corpus (H100) and a CPU log made
here. tlparse's output is laid out as tlparse 0.4.3 writes it: a verbatim copy of the log it read,
`raw.log`, beside its HTML, `raw.jsonl` and one folder per compile; with `--all-ranks-html`, one
such folder per rank, `rank_N/`. Each folder must read as the same session as the logs themselves.
"""

from __future__ import annotations

import functools
import lzma
import shutil
from pathlib import Path

import pytest

from compiler_core.analysis import import_trace
from compiler_core.session import Session
from compiler_core.trace.trace_folders import MAX_DEPTH, trace_files
from tests.cpu_logs import cpu_log

ROOT = Path(__file__).resolve().parents[3]
DDP = ROOT / "bench" / "corpus" / "logs" / "dist_ddp_train"


@functools.cache
def _ddp() -> Session:
    """The corpus's own rank folder, read the way it has always been read."""
    return import_trace(DDP)


def _ddp_log(rank: int, to: Path) -> Path:
    to.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(DDP / f"dedicated_log_torch_trace_rank_{rank}.log.xz") as src, to.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return to


def _tlparse_report(log: Path, out: Path) -> None:
    """What tlparse leaves in its output folder next to `raw.log` (none of it a trace log)."""
    _copy(log, out / "raw.log")
    (out / "raw.jsonl").write_text('{"string_table": [null]}\n{"dynamo_start": {}, "frame_id": 0}\n')
    (out / "index.html").write_text("<html><body>tlparse</body></html>\n")
    (out / "compile_directory.json").write_text("{}\n")
    (out / "-_0_0_0").mkdir()
    (out / "-_0_0_0" / "dynamo_output_graph_1.txt").write_text("class GraphModule(torch.nn.Module):\n")


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def _problems(session: Session) -> list[str]:
    return [d.message for d in session.diagnostics if d.severity != "info"]


def test_a_cluster_jobs_host_folders_read_as_one_multi_rank_run(tmp_path: Path) -> None:
    job = tmp_path / "job"
    _ddp_log(0, job / "host0" / "dedicated_log_torch_trace_rank_0_k2j1x0aq.log")
    _ddp_log(1, job / "host1" / "dedicated_log_torch_trace_rank_1_9fz0b3wd.log")
    (job / "host0" / "stdout.txt").write_text("training done\n")
    session = import_trace(job)
    assert session.meta.ranks == (0, 1)
    assert session.compiles == _ddp().compiles and session.links == _ddp().links
    assert _problems(session) == []
    assert session.meta.device == "cuda"  # the corpus sidecar's device


def test_tlparse_output_folder_reads_the_log_tlparse_read(tmp_path: Path) -> None:
    log = cpu_log("tiny_model.py").path
    out = tmp_path / "tl_out"
    out.mkdir()
    _tlparse_report(log, out)
    session, direct = import_trace(out), import_trace(log)
    assert session.compiles == direct.compiles and session.compiles
    assert (session.meta.device, session.meta.torch_version) == ("cpu", direct.meta.torch_version)
    assert _problems(session) == []


def test_tlparse_all_ranks_output_takes_each_ranks_folder(tmp_path: Path) -> None:
    out = tmp_path / "tl_out"
    for rank in (0, 1):
        (out / f"rank_{rank}").mkdir(parents=True)
        _tlparse_report(_ddp_log(rank, tmp_path / "in" / f"rank{rank}.log"), out / f"rank_{rank}")
    (out / "index.html").write_text("<html>multi-rank landing page</html>\n")
    assert [rank for _, rank in trace_files(out)] == [0, 1]  # from the folders: the names have none
    session = import_trace(out)
    assert session.meta.ranks == (0, 1) and session.compiles == _ddp().compiles
    assert _problems(session) == []


def test_logs_beside_a_tlparse_report_of_them_are_read_once(tmp_path: Path) -> None:
    for rank in (0, 1):
        log = _ddp_log(rank, tmp_path / f"host{rank}" / f"dedicated_log_torch_trace_rank_{rank}_a.log")
        (tmp_path / "tl_out" / f"rank_{rank}").mkdir(parents=True)
        _tlparse_report(log, tmp_path / "tl_out" / f"rank_{rank}")
    assert [Path(f).name for f, _ in trace_files(tmp_path)] == [
        "dedicated_log_torch_trace_rank_0_a.log",
        "dedicated_log_torch_trace_rank_1_a.log",
    ]
    assert import_trace(tmp_path).compiles == _ddp().compiles


def test_logs_are_looked_for_only_a_few_folders_down(tmp_path: Path) -> None:
    """Deep enough for job/host/rank; a home folder handed in by mistake is not walked whole."""
    name = "dedicated_log_torch_trace_rank_0.log"
    found, missed = tmp_path / "found", tmp_path / "missed"
    _ddp_log(0, found.joinpath(*[f"d{i}" for i in range(MAX_DEPTH)], name))
    _ddp_log(0, missed.joinpath(*[f"d{i}" for i in range(MAX_DEPTH + 1)], name))
    assert [c.compile_id for c in import_trace(found).compiles] == [
        c.compile_id for c in _ddp().compiles if c.rank == 0
    ]
    with pytest.raises(FileNotFoundError):
        import_trace(missed)


def test_a_folder_without_a_log_is_an_error_not_an_empty_session(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing traced\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "another.log").write_text("an application log, not a trace\n")
    with pytest.raises(FileNotFoundError) as raised:
        import_trace(tmp_path)
    message = str(raised.value)
    assert "\n" not in message and str(tmp_path) in message and "dedicated_log_torch_trace" in message


def test_a_rank_folder_above_the_one_given_names_no_rank(tmp_path: Path) -> None:
    given = tmp_path / "rank_7" / "logs"
    _ddp_log(0, given / "dedicated_log_torch_trace_xyz.log")  # rank from the records, not from `rank_7`
    assert trace_files(given) == [(str(given / "dedicated_log_torch_trace_xyz.log"), None)]
    assert import_trace(given).meta.ranks == (0,)


def test_two_logs_of_one_rank_are_two_runs_not_one_compile_twice(tmp_path: Path) -> None:
    """Two jobs written into one TORCH_TRACE folder (or copied side by side): each numbers its
    compiles from 0/0; the second log continues its rank's runs, so every id stays unique."""
    _ddp_log(0, tmp_path / "job_a" / "dedicated_log_torch_trace_rank_0_a.log")
    _ddp_log(0, tmp_path / "job_b" / "dedicated_log_torch_trace_rank_0_b.log")
    session = import_trace(tmp_path)
    first = [c for c in _ddp().compiles if c.rank == 0]
    assert [(c.compile_id, c.run) for c in session.compiles] == (
        [(c.compile_id, 0) for c in first] + [(f"{c.compile_id}#2", 1) for c in first]
    )
    assert _problems(session) == []
    said = [d for d in session.diagnostics if "run 2 of rank 0 starts in this file" in d.message]
    assert [Path(d.path).parent.name for d in said] == ["job_b"]
