"""The app's own sessions of a corpus model, checked by bench/oracle.py against the logs their runs
wrote (Inductor's provenance record, the log's graphs, breaks and quotes): a capture and a script
run of the same model file both pass, and map the same kernels to the same post-grad nodes."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from tests.bench_scripts import bench_module

ROOT = Path(__file__).resolve().parent.parent
SESSIONS = ROOT / "bench" / "corpus" / "sessions" / "cpu"


def _oracle() -> ModuleType:
    return bench_module("oracle")


def test_capture_and_script_run_pass_the_oracle_and_map_alike() -> None:
    from compiler_core.session import load

    oracle = _oracle()
    claims = {}
    for name in ("hf_gptneox_train", "script_hf_gptneox_train"):
        session = oracle._unpacked(SESSIONS / f"{name}.json.xz")
        facts = oracle._session_facts(SESSIONS / f"{name}.json.xz")
        assert facts["device"] == "cpu" and "explain" not in facts  # tiny CPU models: no explain
        cells = oracle.check(oracle.Entry(name, [session], facts))
        failed = {c: why for c, (verdict, why) in cells.items() if verdict == "FAIL"}
        assert not failed, (name, failed)
        for check in ("kernel_claims", "graphs", "device", "crash"):
            assert cells[check][0] == "ok", (name, check, cells)
        claims[name] = {(k.name, frozenset(k.fused_nodes)) for c in load(session).compiles
                        for o in c.inductor for k in o.kernels if k.language != "extern"}
    assert claims["hf_gptneox_train"] == claims["script_hf_gptneox_train"]
    assert all(nodes for _, nodes in claims["hf_gptneox_train"])
