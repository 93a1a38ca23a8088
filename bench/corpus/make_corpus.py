"""Make the corpus of real-architecture TORCH_TRACE logs (bench/corpus/README.md says what is in it).

    python bench/corpus/make_corpus.py [--only a,b] [--jobs N] [--device cuda] [--tiny] [--out DIR]
                                       [--timeout S] [--deadline S] [--pack DIR] [--list]

Each entry is one model file in bench/corpus/models/ (also a CompileScope model file). Its log is
written the way a user writes one: a FRESH process (bench/corpus/runner.py: plain torch, nothing of
CompileScope imported) with TORCH_TRACE=<temp dir> and its own empty Inductor cache, running
`torch.compile(model)` and a few steps; multi-rank entries run under torchrun. The log is then
xz-compressed to OUT/<entry>.log.xz (multi-rank: OUT/<entry>/dedicated_log_torch_trace_rank_N.log.xz,
the layout compiler_core's directory reader takes), and OUT/<entry>.json records the metadata and the
oracle facts: what PyTorch itself counted in the logged process (Dynamo counters, compilation
metrics) and, from a separate fresh process, `torch._dynamo.explain` of the model.

Entries run concurrently (--jobs); one failing never stops the others; each has a timeout; entries
whose needs are missing (CUDA, 2 GPUs, torchvision, timm, torchaudio) are skipped with the reason.
--tiny shrinks every model (2 layers, tiny widths) for a CPU smoke run. --deadline stops starting
entries and kills running ones that many seconds after the start, so a bounded remote call still
ends with its table (and --pack). --pack DIR tars what this run wrote into DIR/corpus_logs.tar
(split in parts under 15 MiB if larger) plus DIR/corpus_report.txt: unpack with
`tar xf corpus_logs.tar -C bench/corpus/logs` (parts: `cat corpus_logs.tar.part* | tar x -C ...`).
Nothing is downloaded: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are set, weights are random from configs.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gzip
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

try:
    import lzma
except ImportError:  # a Python built without liblzma: gzip instead (.log.gz, which the app reads too)
    lzma = None  # type: ignore[assignment]

HERE = Path(__file__).resolve().parent
MODELS = HERE / "models"
RUNNER = HERE / "runner.py"
DEFAULT_OUT = HERE / "logs"
TRACE_PREFIX = "dedicated_log_torch_trace"
SUFFIX = ".log.xz" if lzma is not None else ".log.gz"
CANCEL_MARKER = b'"inductor_post_grad_graph"'  # Inductor has started lowering: the compile is under way
PART_BYTES = 15 * 1024 * 1024
UNFINISHED = ("deadline", "timeout", "pending")
BIG_XZ = 3 * 1000 * 1000


@dataclass(frozen=True)
class Entry:
    name: str
    category: str
    architecture: str
    mode: str  # "train" | "infer"
    trouble: str = "none"
    needs: tuple[str, ...] = ("transformers",)
    scenario: str = "steps"  # steps | twice | cancel | ddp | fsdp
    expect: str = "ok"  # ok | crash | cancelled: the outcome that counts as success
    cost: int = 60  # rough seconds on an H100, to start the longest first

    @property
    def model_file(self) -> Path:
        return MODELS / f"{self.name}.py"

    @property
    def multi_rank(self) -> bool:
        return self.scenario in ("ddp", "fsdp")


TV, TIMM, TA = ("torchvision",), ("timm",), ("torchaudio",)
ENTRIES: tuple[Entry, ...] = (
    # decoders
    Entry("hf_qwen2_infer_bf16", "decoder", "HF Qwen2ForCausalLM, 12 layers, batch 1, bf16", "infer",
          cost=50),
    Entry("hf_gptneox_train", "decoder", "HF GPTNeoXForCausalLM (Pythia), 12 layers", "train", cost=110),
    Entry("hf_phi_infer", "decoder", "HF PhiForCausalLM (Phi-2 style), 12 layers, fp16", "infer", cost=50),
    Entry("hf_gemma_infer", "decoder", "HF GemmaForCausalLM, 12 layers, MQA, bf16", "infer", cost=50),
    # encoders
    Entry("hf_roberta_train", "encoder", "HF RobertaForMaskedLM, 12 layers", "train", cost=100),
    Entry("hf_distilbert_infer", "encoder", "HF DistilBertForSequenceClassification, 6 layers, padding mask",
          "infer", cost=35),
    # encoder-decoder
    Entry("hf_t5_train", "encoder-decoder", "HF T5ForConditionalGeneration, 12+12 layers", "train", cost=200),
    Entry("hf_bart_train", "encoder-decoder", "HF BartForConditionalGeneration, 6+6 layers", "train",
          cost=120),
    # mixture of experts
    Entry("hf_mixtral_infer", "moe", "HF MixtralForCausalLM, 12 layers x 8 experts top-2, bf16", "infer",
          cost=90),
    Entry("hf_qwen2moe_infer", "moe", "HF Qwen2MoeForCausalLM, 6 layers x 16 experts top-4 + shared, bf16",
          "infer", trouble="experts_implementation='eager': nonzero() on the routing mask breaks the graph "
                           "in every MoE layer (data-dependent shape)", cost=100),
    # vision
    Entry("tv_vit_b16_train", "vision", "torchvision ViT-B/16, batch 8, bf16 autocast", "train", needs=TV,
          cost=100),
    Entry("tv_swin_t_train", "vision", "torchvision Swin-T, batch 8", "train", needs=TV, cost=130),
    Entry("tv_convnext_t_infer", "vision", "torchvision ConvNeXt-T, batch 8, fp16 channels-last", "infer",
          needs=TV, cost=45),
    Entry("tv_efficientnet_b0_train", "vision", "torchvision EfficientNet-B0, batch 8", "train", needs=TV,
          cost=120),
    Entry("tv_mobilenet_v3_infer", "vision", "torchvision MobileNetV3-Large, batch 8", "infer", needs=TV,
          cost=40),
    Entry("timm_deit_small_train", "vision", "timm deit_small_patch16_224, batch 8", "train", needs=TIMM,
          cost=90),
    # speech
    Entry("hf_whisper_train", "speech", "HF WhisperForConditionalGeneration, whisper-tiny shape 4+4 layers",
          "train", cost=90),
    Entry("ta_wav2vec2_train", "speech", "torchaudio wav2vec2_base + CTC, 12 layers, LayerDrop", "train",
          trouble="torchaudio's LayerDrop draws torch.rand(1) per layer in training (possible graph "
                  "breaks inside torchaudio)", needs=TA, cost=110),
    Entry("ta_conformer_infer", "speech", "torchaudio Conformer, 6 layers, lengths-based padding mask",
          "infer", trouble="the padding mask is built from `lengths` inside torchaudio (possible "
                           "data-dependent break)",
          needs=TA, cost=50),
    # diffusion
    Entry("unet_diffusion_train", "diffusion",
          "diffusion U-Net (diffusers UNet2DModel if installed, else hand-written; see corpus_facts)",
          "train", needs=(), cost=80),
    # shapes of trouble
    Entry("trouble_hf_generate_breaks", "trouble", "HF Qwen2ForCausalLM 6 layers under compiled generate()",
          "infer", trouble="(a) graph breaks inside a library: transformers' generation loop (data-dependent "
                           "branch, Tensor.item() in stopping criteria), decode-step recompiles", cost=90),
    Entry("trouble_tv_data_branch_train", "trouble",
          "torchvision ResNet-18 wrapped with .item() branch + print", "train",
          trouble="(a) graph breaks around a library model: data-dependent .item() branch and print",
          needs=TV, cost=70),
    Entry("trouble_recompile_seq", "trouble", "HF GPT2LMHeadModel 6 layers at seq 32, 48, 64", "infer",
          trouble="(b) recompile from a shape change (seq 32 -> 48), automatic dynamic then covers 64",
          cost=70),
    Entry("trouble_dynamic_true", "trouble", "HF LlamaForCausalLM 6 layers, dynamic=True, 3 shapes", "infer",
          trouble="(c) dynamic shapes: torch.compile(dynamic=True), batch and seq symbolic; the batch-1 "
                  "call still recompiles (sizes 0/1 are specialized)", cost=60),
    Entry("trouble_mark_dynamic", "trouble",
          "HF BertForMaskedLM 6 layers, mark_dynamic(ids, 1), seq 64/80/100", "train",
          trouble="(c) dynamic shapes: torch._dynamo.mark_dynamic on the sequence dim", cost=90),
    Entry("trouble_reset_twice", "trouble", "HF GPT2LMHeadModel 4 layers, compile+run, reset, compile+run",
          "train", trouble="(d) two runs in one log: torch._dynamo.reset() between two compiles",
          scenario="twice", cost=80),
    Entry("trouble_crash_attr", "trouble", "hand-written 6-block transformer, block 2 has an attribute bug",
          "train", trouble="(e) crash in user code during compile: AttributeError in the 3rd block's forward",
          needs=(), expect="crash", cost=20),
    Entry("trouble_cancel_midcompile", "trouble", "HF LlamaForCausalLM 12 layers, killed mid-compile",
          "train", trouble="(f) run cancelled mid-compile: SIGKILL once the log shows Inductor lowering; "
                           "truncated log",
          scenario="cancel", expect="cancelled", cost=40),
    # multi-rank
    Entry("dist_ddp_train", "multi-rank", "HF LlamaForCausalLM 12 layers, DDP on 2 ranks", "train",
          trouble="(g) multi-rank: DDPOptimizer graph splits at bucket boundaries, per-rank logs",
          scenario="ddp", cost=150),
    Entry("dist_fsdp_train", "multi-rank", "HF Qwen2ForCausalLM 12 layers, FSDP2 fully_shard on 2 ranks",
          "train",
          trouble="(g) multi-rank: FSDP2 (FSDP1 fallback) per-layer sharding under compile, per-rank logs",
          scenario="fsdp", cost=150),
)


@dataclass
class Outcome:
    entry: Entry
    status: str = "pending"
    note: str = ""
    seconds: float = 0.0
    xz_bytes: int = 0
    raw_bytes: int = 0
    files: list[str] = field(default_factory=list)
    run: dict = field(default_factory=dict)
    explain: dict = field(default_factory=dict)
    staged: list[tuple[Path, bytes]] = field(default_factory=list)  # compressed logs, published at the end


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="", help="comma-separated entry names (or prefixes ending in *)")
    p.add_argument("--skip", default="", help="comma-separated entry names to leave out")
    p.add_argument("--jobs", type=int, default=6, help="entries run at once (default 6)")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    p.add_argument("--tiny", action="store_true", help="2 layers, tiny widths: a CPU smoke run")
    p.add_argument("--out", default=str(DEFAULT_OUT), help=f"output folder (default {DEFAULT_OUT})")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default 300)")
    p.add_argument("--explain-timeout", type=float, default=180.0)
    p.add_argument("--no-explain", action="store_true", help="leave out the explain() oracle process")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="seconds after start after which nothing starts and running entries are killed")
    p.add_argument("--cancel-after", type=float, default=90.0,
                   help="cancel entry: SIGKILL at this many seconds if Inductor was never seen")
    p.add_argument("--xz-preset", type=int, default=6)
    p.add_argument("--pack", default="", help="also tar what this run wrote into this folder")
    p.add_argument("--keep-tmp", action="store_true", help="keep each entry's temp dir (raw logs, stdout)")
    p.add_argument("--list", action="store_true", help="list the entries and exit")
    return p.parse_args(argv)


def select(args: argparse.Namespace) -> list[Entry]:
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    skip = {n.strip() for n in args.skip.split(",") if n.strip()}
    known = {e.name for e in ENTRIES}

    def wanted(e: Entry) -> bool:
        if e.name in skip:
            return False
        if not names:
            return True
        return any(e.name == n or (n.endswith("*") and e.name.startswith(n[:-1])) for n in names)

    unknown = [n for n in names if not n.endswith("*") and n not in known]
    if unknown:
        raise SystemExit(f"unknown entries: {', '.join(unknown)} (see --list)")
    return [e for e in ENTRIES if wanted(e)]


PROBE = r"""
import json, os, platform, sys
out = {"python": platform.python_version(), "executable": sys.executable}
import torch
out["torch"] = torch.__version__
out["cuda_available"] = torch.cuda.is_available()
out["gpus"] = torch.cuda.device_count() if torch.cuda.is_available() else 0
out["gpu_names"] = [torch.cuda.get_device_name(i) for i in range(out["gpus"])]
out["cuda"] = torch.version.cuda
for name in ("transformers", "torchvision", "torchaudio", "timm", "diffusers", "triton"):
    try:
        mod = __import__(name)
        out[name] = getattr(mod, "__version__", "?")
    except Exception as exc:
        out[name + "_error"] = f"{type(exc).__name__}: {exc}"[:300]
try:
    from torch.distributed.fsdp import fully_shard  # noqa: F401
    out["fsdp2"] = True
except Exception:
    out["fsdp2"] = False
print(json.dumps(out))
"""


def probe_environment() -> dict:
    env = base_env(tiny=False)
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"probe of this Python failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def skip_reason(e: Entry, device: str, facts: dict) -> str:
    for mod in e.needs:
        if mod not in facts:
            return f"{mod} not importable ({facts.get(mod + '_error', 'missing')})"
    if device.startswith("cuda") and not facts.get("cuda_available"):
        return "CUDA not available"
    if e.multi_rank and device.startswith("cuda") and facts.get("gpus", 0) < 2:
        return f"needs 2 GPUs, {facts.get('gpus', 0)} visible"
    return ""


def base_env(tiny: bool) -> dict[str, str]:
    drop = ("TORCH_TRACE", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "TORCHINDUCTOR_", "TORCHDYNAMO_",
            "TRITON_CACHE", "CS_CORPUS", "COMPILESCOPE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1",
               PYTHONDONTWRITEBYTECODE="1")
    if tiny:
        env["CS_CORPUS_TINY"] = "1"
    return env


class Runner:
    def __init__(self, args: argparse.Namespace, facts: dict, entries: list[Entry]) -> None:
        self.args = args
        self.facts = facts
        self.out = Path(args.out).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.outcomes = {e.name: Outcome(e) for e in entries}
        self.pending: dict[str, int] = {}
        gpus = facts.get("gpus", 0) if args.device.startswith("cuda") else 0
        self.gpus = list(range(gpus))
        self.gpu_turn = 0
        cpus = os.cpu_count() or 2
        self.threads = max(1, cpus // max(1, args.jobs))
        self.written: list[Path] = []
        self.procs: set[subprocess.Popen] = set()

    # ---- time --------------------------------------------------------------------------------
    def remaining(self) -> float:
        if not self.args.deadline:
            return float("inf")
        return self.args.deadline - (time.monotonic() - self.t0)

    def limit(self, timeout: float) -> float:
        return min(timeout, self.remaining())

    # ---- processes ---------------------------------------------------------------------------
    def env_for(self, tmp: Path, trace: Path | None, multi_gpu: bool) -> dict[str, str]:
        env = base_env(self.args.tiny)
        env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp / "inductor_cache")
        env["TRITON_CACHE_DIR"] = str(tmp / "triton_cache")
        env["TORCHINDUCTOR_COMPILE_THREADS"] = str(self.threads)
        env["OMP_NUM_THREADS"] = str(self.threads)
        if trace is not None:
            env["TORCH_TRACE"] = str(trace)
        if self.gpus and not multi_gpu:
            with self.lock:
                gpu = self.gpus[self.gpu_turn % len(self.gpus)]
                self.gpu_turn += 1
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
        return env

    def spawn(self, cmd: list[str], env: dict[str, str], tmp: Path, tag: str) -> subprocess.Popen:
        out = open(tmp / f"{tag}.out", "wb")  # noqa: SIM115 (closed in wait)
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=str(tmp), start_new_session=True)
        proc._corpus_out = out  # type: ignore[attr-defined]
        with self.lock:
            self.procs.add(proc)
        return proc

    def kill(self, proc: subprocess.Popen) -> None:
        """SIGKILL the child's whole process group (its Inductor compile workers, torchrun's ranks)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def wait(self, proc: subprocess.Popen, timeout: float) -> tuple[int | None, bool]:
        """(exit code, timed out)."""
        try:
            rc = proc.wait(timeout=max(1.0, timeout))
            timed_out = False
        except subprocess.TimeoutExpired:
            self.kill(proc)
            rc = proc.wait()
            timed_out = True
        self.kill(proc)  # stray grandchildren left by a clean exit, if any
        proc._corpus_out.close()  # type: ignore[attr-defined]
        with self.lock:
            self.procs.discard(proc)
        return rc, timed_out

    def kill_all(self) -> None:
        with self.lock:
            procs = list(self.procs)
        for proc in procs:
            self.kill(proc)

    # ---- one entry's logged run --------------------------------------------------------------
    def run_entry(self, e: Entry) -> None:
        o = self.outcomes[e.name]
        if self.remaining() < 20:
            o.status, o.note = "deadline", "not started: deadline reached"
            self.finish(e, "run")
            return
        tmp = Path(tempfile.mkdtemp(prefix=f"corpus_{e.name}_"))
        trace = tmp / "trace"
        trace.mkdir()
        result = tmp / "result.json"
        t = time.monotonic()
        if e.multi_rank:
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                   str(RUNNER), str(e.model_file), "--dist", e.scenario, "--device", self.args.device,
                   "--result", str(result)]
        else:
            scenario = "twice" if e.scenario == "twice" else "steps"
            cmd = [sys.executable, str(RUNNER), str(e.model_file), "--device", self.args.device,
                   "--scenario", scenario, "--result", str(result)]
        proc = self.spawn(cmd, self.env_for(tmp, trace, e.multi_rank), tmp, "run")
        cancelled_at = None
        if e.scenario == "cancel":
            cancelled_at = self.watch_and_cancel(proc, trace, t)
        rc, timed_out = self.wait(proc, self.limit(self.args.timeout) - (time.monotonic() - t))
        o.seconds = round(time.monotonic() - t, 1)
        run: dict = {"command": shown(cmd, tmp),
                     "exit_code": rc, "timed_out": timed_out, "seconds": o.seconds}
        if cancelled_at is not None:
            run["killed_after_s"] = round(cancelled_at, 2)
            run["killed_by"] = "SIGKILL to the process group once the log showed " + CANCEL_MARKER.decode()
        for path in sorted(tmp.glob("result*.json")):
            try:
                data = json.loads(path.read_text())
            except Exception as exc:
                data = {"unreadable": repr(exc)}
            key = "process" if path.name == "result.json" else path.stem.replace("result.", "")
            run.setdefault("results", {})[key] = data
        run["output_tail"] = tail(tmp / "run.out", 40)
        o.run = run
        self.collect_logs(e, o, trace)
        o.status, o.note = judge(e, o, rc, timed_out, cancelled_at, self.remaining())
        self.finish(e, "run")
        if not self.args.keep_tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            o.note += f" (tmp {tmp})"

    def watch_and_cancel(self, proc: subprocess.Popen, trace: Path, t: float) -> float | None:
        """Poll the growing log; SIGKILL the process group 0.3 s after Inductor starts lowering (or
        at --cancel-after). Returns when it was killed, None when it ended first."""
        offsets: dict[Path, int] = {}
        tail_bytes: dict[Path, bytes] = {}
        seen_at = None
        while proc.poll() is None:
            now = time.monotonic() - t
            if seen_at is None:
                for path in trace.glob("*.log"):
                    with open(path, "rb") as f:
                        f.seek(offsets.get(path, 0))
                        chunk = f.read()
                    offsets[path] = offsets.get(path, 0) + len(chunk)
                    window = tail_bytes.get(path, b"") + chunk
                    if CANCEL_MARKER in window:
                        seen_at = now
                    tail_bytes[path] = window[-len(CANCEL_MARKER):]
            if (seen_at is not None and now - seen_at >= 0.3) or now >= self.args.cancel_after \
                    or self.remaining() < 5:
                self.kill(proc)
                return now
            time.sleep(0.05)
        return None

    def clear_outputs(self, e: Entry) -> None:
        for suffix in (".log.xz", ".log.gz", ".json"):
            path = self.out / f"{e.name}{suffix}"
            path.unlink(missing_ok=True)
        shutil.rmtree(self.out / e.name, ignore_errors=True)

    def collect_logs(self, e: Entry, o: Outcome, trace: Path) -> None:
        logs = [p for p in trace.glob("*.log") if p.stat().st_size > 0]
        info: list[dict] = []
        if e.multi_rank:
            by_rank: dict[int, Path] = {}
            for p in logs:
                m = re.search(r"rank_(\d+)", p.name)
                rank = int(m.group(1)) if m else None
                bigger = rank not in by_rank or p.stat().st_size > by_rank[rank].stat().st_size
                if rank is not None and bigger:
                    by_rank[rank] = p
            chosen = [(p, self.out / e.name / f"{TRACE_PREFIX}_rank_{r}{SUFFIX}")
                      for r, p in sorted(by_rank.items())]
            others = [p for p in logs if p not in by_rank.values()]
        else:
            logs.sort(key=lambda p: p.stat().st_size)
            chosen = [(logs[-1], self.out / f"{e.name}{SUFFIX}")] if logs else []
            others = logs[:-1]
        for src, dst in chosen:
            raw = src.read_bytes()
            data = (lzma.compress(raw, preset=self.args.xz_preset) if lzma is not None
                    else gzip.compress(raw, compresslevel=9))
            o.staged.append((dst, data))
            o.raw_bytes += len(raw)
            o.xz_bytes += len(data)
            o.files.append(str(dst.relative_to(self.out)))
            info.append({"path": str(dst.relative_to(self.out)), "source_name": src.name,
                         "raw_bytes": len(raw), "xz_bytes": len(data), "lines": raw.count(b"\n"),
                         "ends_with_newline": raw.endswith(b"\n")})
        o.run["log_files"] = info
        if others:
            o.run["other_trace_files"] = [{"name": p.name, "bytes": p.stat().st_size} for p in others]

    # ---- explain oracle ----------------------------------------------------------------------
    def explain_entry(self, e: Entry) -> None:
        o = self.outcomes[e.name]
        if self.remaining() < 20:
            o.explain = {"status": "not run: deadline"}
            self.finish(e, "explain")
            return
        tmp = Path(tempfile.mkdtemp(prefix=f"corpus_{e.name}_explain_"))
        result = tmp / "explain.json"
        cmd = [sys.executable, str(RUNNER), str(e.model_file), "--device", self.args.device, "--scenario",
               "explain", "--result", str(result)]
        t = time.monotonic()
        proc = self.spawn(cmd, self.env_for(tmp, None, False), tmp, "explain")
        rc, timed_out = self.wait(proc, self.limit(self.args.explain_timeout))
        try:
            data = json.loads(result.read_text())
        except Exception as exc:
            data = {"status": "no result", "error": repr(exc)}
        data.update(exit_code=rc, timed_out=timed_out, wall_seconds=round(time.monotonic() - t, 1))
        if rc != 0:
            data["output_tail"] = tail(tmp / "explain.out", 30)
        o.explain = data
        self.finish(e, "explain")
        shutil.rmtree(tmp, ignore_errors=True)

    # ---- metadata ----------------------------------------------------------------------------
    def finish(self, e: Entry, part: str) -> None:
        """When both parts of an entry are done, its outputs replace the old ones at once (logs
        and .json together). A run cut short by --timeout or --deadline publishes nothing: the
        entry's previous files stay as they were."""
        o = self.outcomes[e.name]
        with self.lock:
            self.pending[e.name] -= 1
            done = self.pending[e.name] == 0
            if done and o.status in UNFINISHED:
                o.note += "; nothing written (earlier files, if any, kept)"
            elif done:
                self.clear_outputs(e)
                for dst, data in o.staged:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    dst.write_bytes(data)
                    self.written.append(dst)
                self.write_meta(e)
        if done:
            self.report_line(o)

    def write_meta(self, e: Entry) -> None:
        o = self.outcomes[e.name]
        process = (o.run.get("results") or {}).get("process") or {}
        ranks = {k: v for k, v in (o.run.get("results") or {}).items() if k != "process"}
        first = process or (ranks[sorted(ranks)[0]] if ranks else {})
        versions = first.get("versions") or {k: self.facts.get(k) for k in
                                             ("python", "torch", "transformers", "torchvision", "torchaudio",
                                              "timm", "diffusers", "triton", "cuda")}
        corpus_facts = first.get("corpus_facts") or o.explain.get("corpus_facts") or {}
        meta = {
            "entry": e.name,
            "category": e.category,
            "architecture": e.architecture,
            "kind": e.category,
            "mode": e.mode,
            "train": e.mode == "train",
            "layers": corpus_facts.get("layers"),
            "trouble": e.trouble,
            "scenario": e.scenario,
            "expected_outcome": e.expect,
            "status": o.status,
            "note": o.note,
            "model_file": f"bench/corpus/models/{e.model_file.name}",
            "log": (f"{e.name}/" if e.multi_rank else (o.files[0] if o.files else None)),
            "tiny": self.args.tiny,
            "device": self.args.device,
            "gpu": first.get("gpu") or (self.facts.get("gpu_names") or [None])[0],
            "world_size": 2 if e.multi_rank else 1,
            "versions": versions,
            "compile_options": first.get("compile_options"),
            "corpus_facts": corpus_facts,
            "run": {k: v for k, v in o.run.items() if k != "results"},
            "steps": first.get("steps"),
            "oracle": {
                "logged_run": {k: v.get("logged_run") for k, v in (o.run.get("results") or {}).items()},
                "logged_run_before_reset": first.get("compile_facts_before_reset"),
                "explain": slim_explain(o.explain),
            },
            "compilescope_imported_in_logged_run": any(v.get("compilescope_imported")
                                                       for v in (o.run.get("results") or {}).values()),
            "exception": first.get("exception") or next((v.get("exception") for v in ranks.values()
                                                         if v.get("exception")), None),
            "rank_results": {k: {kk: v.get(kk) for kk in ("status", "wrapper", "exception", "seconds",
                                                          "device")}
                             for k, v in ranks.items()} or None,
            "generated_by": "bench/corpus/make_corpus.py",
            "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "host": {**{k: self.facts.get(k) for k in ("gpus", "gpu_names", "python")},
                     "cpus": os.cpu_count()},
        }
        path = self.out / f"{e.name}.json"
        path.write_text(json.dumps(meta, indent=1, sort_keys=False) + "\n")
        if path not in self.written:
            self.written.append(path)

    # ---- reporting ---------------------------------------------------------------------------
    def report_line(self, o: Outcome) -> None:
        g, b = graphs_breaks(o)
        mb = f"{o.xz_bytes / 1e6:.2f} MB" if o.xz_bytes else "no log"
        big = "  (over 3 MB!)" if o.xz_bytes > BIG_XZ else ""
        print(f"[{o.status:>9}] {o.entry.name:<30} {o.seconds:7.1f} s  {mb:>9}  graphs={g} breaks={b}"
              f"{big}  {o.note}", flush=True)

    def table(self) -> str:
        rows = [("entry", "status", "seconds", "xz MB", "graphs", "breaks", "explain", "note")]
        for o in self.outcomes.values():
            g, b = graphs_breaks(o)
            ex = o.explain
            exs = (f"{ex.get('graph_count')}g/{ex.get('break_reason_count')}b" if "graph_count" in ex
                   else (ex.get("status") or "-"))
            mb = f"{o.xz_bytes / 1e6:.2f}" if o.xz_bytes else "-"
            rows.append((o.entry.name, o.status, f"{o.seconds:.1f}", mb, g, b, str(exs), o.note[:70]))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        total = sum(o.xz_bytes for o in self.outcomes.values())
        counts: dict[str, int] = {}
        for o in self.outcomes.values():
            counts[o.status] = counts.get(o.status, 0) + 1
        lines.append("")
        tally = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        lines.append(f"{len(self.outcomes)} entries: {tally}"
                     f"; logs {total / 1e6:.2f} MB xz in {self.out}; {time.monotonic() - self.t0:.0f} s")
        return "\n".join(lines)


def graphs_breaks(o: Outcome) -> tuple[str, str]:
    results = o.run.get("results") or {}
    first = results.get("process") or (results[sorted(results)[0]] if results else {})
    lr = first.get("logged_run") or {}
    graphs = lr.get("unique_graphs")
    breaks = sum(r.get("count", 0) for r in lr.get("graph_break_reasons") or [])
    return ("-" if graphs is None else str(graphs)), (str(breaks) if lr else "-")


def slim_explain(ex: dict) -> dict:
    keep = ("status", "graph_count", "graph_break_count", "break_reason_count", "op_count", "break_reasons",
            "explain_calls", "exception", "note", "exit_code", "timed_out", "wall_seconds", "output_tail")
    return {k: ex[k] for k in keep if k in ex}


def judge(e: Entry, o: Outcome, rc, timed_out: bool, cancelled_at, remaining: float) -> tuple[str, str]:
    has_log = bool(o.files)
    results = o.run.get("results") or {}
    exc = next((r.get("exception") for r in results.values() if r.get("exception")), None)
    if e.expect == "cancelled":
        if cancelled_at is None:
            return ("failed" if rc else "not-cancelled"), f"ended (rc {rc}) before it could be cancelled"
        return ("ok" if has_log else "no-log"), f"SIGKILLed at {cancelled_at:.1f} s mid-compile"
    if timed_out or (rc is not None and rc < 0 and remaining < 5):
        why = "deadline" if remaining < 5 else "timeout"
        return why, f"killed after {o.seconds:.0f} s ({why}); log truncated"
    if e.expect == "crash":
        if rc and exc:
            what = f"{exc['type']}: {exc['message'][:60]}"
            return ("ok" if has_log else "no-log"), f"crashed as intended: {what}"
        return "failed", f"expected a crash, got rc {rc}"
    if rc != 0:
        what = (f"{exc['type']}: {exc['message'][:80]}" if exc
                else f"rc {rc}: {o.run.get('output_tail', '')[-120:]}")
        return "failed", what.replace("\n", " ")
    if not has_log:
        return "no-log", "exited 0 but TORCH_TRACE wrote no log"
    return "ok", ""


def shown(cmd: list[str], tmp: Path) -> str:
    """The command as the metadata records it: no local paths."""
    out = []
    for c in cmd:
        if c == sys.executable:
            c = "python"
        elif c.startswith(str(tmp)):
            c = "<tmp>" + c[len(str(tmp)):]
        elif c.startswith(str(HERE)):
            c = "bench/corpus/" + str(Path(c).relative_to(HERE))
        out.append(c)
    return " ".join(out)


def tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    kept = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(kept[-lines:])[-6000:]


def pack(runner: Runner, dest: Path, table: str) -> list[Path]:
    dest.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(set(runner.written)):
            if path.exists():
                tar.add(path, arcname=str(path.relative_to(runner.out)))
    data = buf.getvalue()
    written = []
    if len(data) <= PART_BYTES:
        target = dest / "corpus_logs.tar"
        target.write_bytes(data)
        written.append(target)
    else:
        for i in range(0, len(data), PART_BYTES):
            target = dest / f"corpus_logs.tar.part{i // PART_BYTES:02d}"
            target.write_bytes(data[i:i + PART_BYTES])
            written.append(target)
    report = dest / "corpus_report.txt"
    report.write_text(table + "\n")
    written.append(report)
    return written


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    entries = select(args)
    if args.list:
        for e in entries:
            print(f"{e.name:<30} {e.category:<16} {e.mode:<6} {e.architecture}"
                  + (f"  [trouble: {e.trouble}]" if e.trouble != "none" else ""))
        return 0
    missing = [e.name for e in entries if not e.model_file.is_file()]
    if missing:
        raise SystemExit(f"model files missing: {missing}")
    facts = probe_environment()
    print(f"python {facts['python']}, torch {facts['torch']}, transformers {facts.get('transformers', '-')}, "
          f"torchvision {facts.get('torchvision', '-')}, timm {facts.get('timm', '-')}, "
          f"torchaudio {facts.get('torchaudio', '-')}, diffusers {facts.get('diffusers', '-')}; "
          f"GPUs {facts.get('gpus', 0)} {facts.get('gpu_names', [])}; device {args.device}"
          f"{' (tiny)' if args.tiny else ''}; jobs {args.jobs}", flush=True)
    runner = Runner(args, facts, entries)
    tasks: list[tuple[float, str, Entry]] = []
    for e in entries:
        why = skip_reason(e, args.device, facts)
        if why:
            runner.outcomes[e.name].status, runner.outcomes[e.name].note = "skipped", why
            runner.report_line(runner.outcomes[e.name])
            continue
        runner.pending[e.name] = 1
        tasks.append((e.cost * (2.2 if e.multi_rank else 1.0), "run", e))
        if not e.multi_rank and not args.no_explain:
            runner.pending[e.name] += 1
            tasks.append((e.cost * 0.3, "explain", e))
    tasks.sort(key=lambda t: -t[0])

    def do(kind: str, e: Entry) -> None:
        try:
            (runner.run_entry if kind == "run" else runner.explain_entry)(e)
        except Exception as exc:  # the maker's own bug for one entry: record it, go on with the rest
            o = runner.outcomes[e.name]
            if kind == "run":
                o.status, o.note = "failed", f"make_corpus error: {type(exc).__name__}: {exc}"
            else:
                o.explain = {"status": f"make_corpus error: {type(exc).__name__}: {exc}"}
            runner.finish(e, kind)

    interrupted = False
    watchdog = None
    if args.deadline:
        def on_deadline() -> None:
            print(f"deadline of {args.deadline:.0f} s: killing what still runs", flush=True)
            runner.kill_all()

        watchdog = threading.Timer(args.deadline, on_deadline)
        watchdog.daemon = True
        watchdog.start()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(do, kind, e) for _, kind, e in tasks]
        try:
            for f in as_completed(futures):
                f.result()
        except KeyboardInterrupt:
            interrupted = True
            for f in futures:
                f.cancel()
            runner.kill_all()
    if watchdog is not None:
        watchdog.cancel()
    table = runner.table()
    print("\n" + table, flush=True)
    if args.pack:
        for path in pack(runner, Path(args.pack), table):
            print(f"packed {path} ({path.stat().st_size / 1e6:.2f} MB)")
    bad = [o for o in runner.outcomes.values() if o.status not in ("ok", "skipped")]
    return 130 if interrupted else (1 if bad else 0)


if __name__ == "__main__":
    sys.exit(main())

