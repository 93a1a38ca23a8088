# Phases of bench/gpu_round.sh (sourced in a fresh bash per phase; $R is the results folder).
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
pytest_gpu=(python3 -m pytest -q -p no:cacheprovider -p no:pytestqt -o addopts= -W ignore::pytest.PytestConfigWarning)

phase_tt() {  # timeline truth: the app's CLI against a plain loop in a fresh process, one GPU
    CS_LAYERS=8 timeout 1700 python3 bench/timeline_truth.py --device cuda --steps 100 --rounds 3 \
        --out "$R/tt" --json
}
phase_gputests() {
    timeout 900 "${pytest_gpu[@]}" -m gpu tests/compiler_core -rs
}
phase_kexport() {
    timeout 900 python3 bench/kernel_export_timing.py --json
}
phase_core211() {  # the CPU-path core tests on this machine's torch (2.11): the private hooks
    timeout 1200 "${pytest_gpu[@]}" tests/compiler_core -m "not slow and not gpu" --timeout 300 -x -q
}
phase_sessions() {  # app sessions of the corpus, packed xz for the repo
    timeout 1100 python3 bench/corpus/app_sessions.py --device cuda --out "$R/sessions" --jobs 5
    mkdir -p "$R/pack"
    tar -C "$R" -cf - sessions | xz -6 -T8 >"$R/pack/sessions.tar.xz"; ls -la "$R/pack"
}
phase_pairs() {  # before/after pairs through the diff CLI
    mkdir -p "$R/pack"
    timeout 600 python3 -m compiler_core diff --apply mode:reduce-overhead \
        bench/corpus/models/hf_qwen2_infer_bf16.py --device cuda --json -o "$R/pack/pair_qwen2_mode.json"
    echo "exit $?"
    CS_LAYERS=8 timeout 600 python3 -m compiler_core diff --apply activation_memory_budget=0.5 \
        bench/corpus/models/hf_gptneox_train.py --device cuda --json -o "$R/pack/pair_gptneox_budget.json"
    echo "exit $?"
}
phase_sessions_small() {  # the CUDA-graph and capture-vs-script entries first
    timeout 900 python3 bench/corpus/app_sessions.py --device cuda --out "$R/sessions" --jobs 4 \
        --only hf_qwen2_infer_bf16,tv_vit_b16_train,hf_gptneox_train
    mkdir -p "$R/pack"
    tar -C "$R" -cf - sessions | xz -6 -T8 >"$R/pack/sessions.tar.xz"; ls -la "$R/pack"
}
phase_sp() {  # does the loop's stack placement alone explain app-vs-loop gaps? (bench/stack_placement.py)
    timeout 900 python3 bench/stack_placement.py --device cuda --models hf_gptneox_train,hf_bart_train \
        --steps 100 --rounds 2 --out "$R/sp" --json
}
phase_ranks() {  # two-GPU DDP and FSDP2 runs through `run --nproc 2`: a rank that branches, a slow rank
    mkdir -p "$R/pack/ranks"; export RANKS_DEVICE=cuda
    local s=tests/compiler_core/ranks/scripts
    for job in "ddp_ranks.py --mode diverge --steps 6:ddp_diverge" "ddp_ranks.py --mode slow --steps 8:ddp_slow" \
               "fsdp_ranks.py:fsdp_diverge" "fsdp_ranks.py slow:fsdp_slow"; do
        local name="${job##*:}" cmd="${job%:*}"; set -- $cmd
        local script="$1"; shift
        timeout 400 python3 -m compiler_core run --nproc 2 --device cuda -o "$R/pack/ranks/$name.json" \
            "$s/$script" -- "$@"
        echo "$name exit $?"
        python3 -m compiler_core summary "$R/pack/ranks/$name.json" | grep -iA6 'rank' | head -30
    done
}
phase_sp4() {  # the app against the user's loop at its own place and at a fresh chunk, four kinds of model
    CS_LAYERS=8 timeout 1500 python3 bench/stack_placement.py --device cuda --placements natural,fresh --steps 100 --rounds 2 \
        --models hf_bart_train,tv_convnext_t_infer,hf_qwen2_infer,hf_gptneox_train --out "$R/sp4" --json
}
phase_sessions_rest() {  # the corpus's other entries (the four of sessions_small are in the repo already)
    pip install -q --no-deps .whl/timm-*.whl 2>&1 | tail -1
    local only
    only=$(ls bench/corpus/models | sed 's/\.py$//' | grep -v '^_\|^dist_\|trouble_cancel\|^hf_gptneox_train$\|^hf_qwen2_infer_bf16$\|^tv_vit_b16_train$' | paste -sd,)
    timeout 1150 python3 bench/corpus/app_sessions.py --device cuda --out "$R/sessions" --jobs 5 --only "$only"
    mkdir -p "$R/pack"
    tar -C "$R" -cf - sessions | xz -6 -T8 >"$R/pack/sessions.tar.xz"; ls -la "$R/pack"
}
phase_pair_mode() {  # default -> reduce-overhead on Qwen2 once more, after the partitioned-code fix
    mkdir -p "$R/pack"
    timeout 600 python3 -m compiler_core diff --apply mode:reduce-overhead \
        bench/corpus/models/hf_qwen2_infer_bf16.py --device cuda --json -o "$R/pack/pair_qwen2_mode.json"
    echo "exit $?"
}
phase_spread() {  # do a user's own loops agree run to run, free and pinned next to the GPU?
    CS_LAYERS=8 timeout 900 python3 bench/loop_spread.py --device cuda --models hf_qwen2_infer --runs 4 \
        --cores 4 --out "$R/pack" --json
}
phase_spread2() {  # is the run-to-run spread the process's own choices (hash seed, address layout)?
    CS_LAYERS=8 timeout 560 python3 bench/loop_spread.py --device cuda --models hf_qwen2_infer --runs 3 \
        --cores 4 --placements free,seeded,fixed --out "$R/pack" --json
}
