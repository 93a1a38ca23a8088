#!/usr/bin/env bash
# The GPU checks, batched for a lent H100/H200 (torch 2.11, triton 3.6, Python 3.12, no PySide6).
# Usage from the repo root:  OUT=/tmp/out bench/gpu_checks.sh {capture|timeline|steps|join|stages|core}
# Each part fits one 10-minute device call; results land in $OUT.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/compilescope-gpu}"; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
# no PySide6 there, so no pytest-qt; its ini option is then unknown, which is only a warning
pytest_gpu=(python3 -m pytest -q -p no:cacheprovider -p no:pytestqt -o addopts= -W ignore::pytest.PytestConfigWarning)
case "${1:-capture}" in
capture)
    timeout 300 "${pytest_gpu[@]}" -m gpu tests/compiler_core 2>&1 | tail -20
    for ex in triton_add_relu transformer_block; do
        timeout 150 python3 -m compiler_core capture "resources/examples/$ex.py" --device cuda -q \
            -o "$OUT/${ex}_cuda.json" && python3 -m compiler_core summary "$OUT/${ex}_cuda.json"
    done ;;
timeline)
    timeout 560 python3 bench/timeline_accuracy.py --json 2>&1 | tail -30 ;;
steps)  # issue 14: real HF Llama step times against an independent block timing, then the gpu test
    # one model (MODEL, default hf_llama_infer) per call: as many rounds as fit in SECONDS per mode
    timeout "${STEPS_TIMEOUT:-560}" python3 bench/real_step_times.py --models "${MODEL:-hf_llama_infer}" \
        --rounds 1000 --seconds "${SECONDS_PER_MODE:-120}" --min-rounds 30 --json 2>&1 | grep -v "^USDT" | tail -40
    timeout 90 "${pytest_gpu[@]}" -m gpu tests/compiler_core/timeline/test_gpu_timeline.py 2>&1 | tail -15 ;;
join)  # issue 14.4: share of each mode's GPU time joined to the session's kernels, through the CLI
    timeout 420 python3 bench/runtime_join.py --capture bench/models/hf_llama_infer.py --device cuda \
        --modes default,reduce-overhead --steps 40 --json "$OUT/infer.json" 2>&1 | tail -8 ;;
stages)
    OUT="$OUT" timeout 560 python3 bench/gpu_stages.py 2>&1 | tail -40 ;;
core)  # the CPU-path core tests on this machine's torch (2.11): private hooks across versions
    timeout 560 "${pytest_gpu[@]}" tests/compiler_core -m "not slow" --timeout 300 2>&1 | tail -30 ;;
esac
