"""The machine an exported file was generated for, and the few lines that refuse any other.

Inductor's C++ kernels are compiled for one CPU vector width and one OpenMP thread count: a
kernel written for 256-bit vectors (`Vectorized<float>::loadu(p, 8)`, loops stepping by 8) and
compiled here with AVX-512 headers reads and writes 16 floats per step, and a parallel reduction
sized `tmp_acc0_arr[2]` for two threads overruns its array with more. Either corrupts the heap
(the bundled transformer session's output code aborts with glibc malloc errors on an AVX-512
machine). Neither width nor threads is stored in a session, so both are read back from the
generated code itself, where they are unambiguous: the widest full-vector `loadu` count, and the
per-thread accumulator arrays.

Every exported file starts with `preamble()`: it states the machine, pins OpenMP to the recorded
thread count before torch loads, and, before any compiled code is loaded, checks torch's
major.minor, the device kind and (for C++ code) that this CPU offers the recorded vector width.
Where it does, the file asks Inductor for that width (`cpp.simdlen`), so code generated on an
AVX2 machine runs correctly on an AVX-512 one; where it does not, the file prints one line that
says why and exits with `REFUSED_EXIT`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from compiler_core.session import Session

REFUSED_EXIT = 3  # an exported file run on a machine it was not generated for
# Inductor tiles every vectorised loop by the float vector's lane count and loads other types
# (bf16, int64, bool masks) that many lanes at a time too, so lanes x 32 bits is the ISA's width
_LOADU = re.compile(r"Vectorized<[\w:]+>::loadu\([^;]*?static_cast<int64_t>\((\d+)L?\)\)")
_THREAD_ARRAY = re.compile(r"\b\w+_arr\[(\d+)\];")
_TID_LOOP = re.compile(r"for \(int tid = 0; tid < (\d+); tid\+\+\)")
_ISA = {128: "128-bit (SSE/NEON)", 256: "256-bit (AVX2 or SVE256)", 512: "512-bit (AVX-512)"}


@dataclass(frozen=True)
class MachineStamp:
    device: str  # cpu | cuda | xpu | "" (unknown)
    torch: str  # major.minor, "" when the session does not say
    vector_bits: int = 0  # the C++ code's vector width; 0: no vector code seen
    threads: int = 0  # OpenMP threads the C++ code was sized for; 0: none seen

    def describe(self) -> str:
        parts = [f"device {self.device or 'unknown'}", f"torch {self.torch or 'unknown'}"]
        if self.vector_bits:
            parts.append(f"CPU vectors {_ISA.get(self.vector_bits, f'{self.vector_bits}-bit')}")
        if self.threads:
            parts.append(f"{self.threads} OpenMP threads")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device,
            "torch": self.torch,
            "vector_bits": self.vector_bits,
            "threads": self.threads,
        }


def torch_minor(version: str) -> str:
    """`2.13` of `2.13.0+cpu`; "" when `version` is not one."""
    m = re.match(r"^(\d+)\.(\d+)", version.strip())
    return f"{m.group(1)}.{m.group(2)}" if m else ""


def device_kind(device: str) -> str:
    """cpu | cuda | xpu from a session's device text ("NVIDIA H200" is CUDA), "" when unknown."""
    low = device.lower()
    if not low:
        return ""
    if low.startswith("cpu"):
        return "cpu"
    if low.startswith("xpu") or "intel" in low:
        return "xpu"
    return "cuda"


def vector_bits(sources: Iterable[str]) -> int:
    """The widest full-vector load in C++ kernel sources, in bits (tails load fewer lanes)."""
    best = 0
    for text in sources:
        for m in _LOADU.finditer(text):
            best = max(best, int(m.group(1)) * 32)
    return best


def omp_threads(sources: Iterable[str]) -> int:
    """The thread count per-thread accumulator arrays were sized for (0: no such array)."""
    found = [int(n) for text in sources for n in (*_THREAD_ARRAY.findall(text), *_TID_LOOP.findall(text))]
    return max(found, default=0)


def session_stamp(session: Session) -> MachineStamp:
    """One stamp per session: every C++ kernel of a capture or log was compiled on one machine."""
    cpp = [k.source for c in session.compiles for o in c.inductor for k in o.kernels if k.language == "cpp"]
    return MachineStamp(
        device_kind(session.meta.device),
        torch_minor(session.meta.torch_version),
        vector_bits(cpp),
        omp_threads(cpp),
    )


def preamble(stamp: MachineStamp, device: str, compiled_cpp: bool) -> str:
    """The first statements of an exported file: the machine it states and the checks that run
    before it imports anything else. `device` is this file's (a CPU kernel of a GPU session runs
    on the CPU); `compiled_cpp` adds the vector-width check and the OpenMP pin."""
    stamp = replace(stamp, device=device)
    machine = {
        "device": device,
        "torch": stamp.torch,
        "vector_bits": stamp.vector_bits if compiled_cpp else 0,
        "threads": stamp.threads if compiled_cpp else 0,
    }
    return _PREAMBLE.format(describe=_one_line(stamp.describe()), machine=repr(machine), refused=REFUSED_EXIT)


def _one_line(text: str) -> str:
    return " ".join(text.split())


_PREAMBLE = '''\
# Generated for: {describe}
import os
import sys

MACHINE = {machine}
if MACHINE["threads"]:  # the C++ code's per-thread arrays are sized for this many threads
    os.environ["OMP_NUM_THREADS"] = str(MACHINE["threads"])

import torch


def _machine_differences():
    """What this machine lacks of MACHINE; empty when the compiled code may be loaded here."""
    found = []
    have = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    if MACHINE["torch"] and MACHINE["torch"] != have:
        found.append("torch " + MACHINE["torch"] + " (this is torch " + have + ")")
    if MACHINE["device"] == "cuda" and not torch.cuda.is_available():
        found.append("a CUDA GPU (none is available here)")
    if MACHINE["device"] == "xpu" and not (hasattr(torch, "xpu") and torch.xpu.is_available()):
        found.append("an XPU (none is available here)")
    if MACHINE["vector_bits"] and not found:
        from torch._inductor import config
        from torch._inductor.cpu_vec_isa import valid_vec_isa_list

        widths = sorted({{isa.bit_width() for isa in valid_vec_isa_list()}})
        if MACHINE["vector_bits"] not in widths:
            found.append(str(MACHINE["vector_bits"]) + "-bit CPU vectors (this CPU offers "
                         + (", ".join(str(w) + "-bit" for w in widths) or "none") + ")")
        else:  # compile for the recorded width, not this CPU's widest
            config.cpp.simdlen = MACHINE["vector_bits"]
    return found


_DIFFERENCES = _machine_differences()
if _DIFFERENCES:
    print("not run: generated for another machine; it needs " + "; ".join(_DIFFERENCES)
          + ". Export it again from a session captured here.")
    sys.exit({refused})
'''
