#!/usr/bin/env bash
# GPU work longer than one device call: a runner started in its own process session works through
# the phases listed in bench/gpu_round.phases (re-read after each phase, so a later call can add
# phases), and each call waits for progress and packs what finished into $OUT.
#   bench/gpu_round.sh start           start the runner (no-op when it runs)
#   bench/gpu_round.sh poll SECONDS    wait until every listed phase ended or SECONDS passed; pack
# Phases are the functions of bench/gpu_phases.sh; results land in $R (/tmp/gpu_round).
set -uo pipefail
R=/tmp/gpu_round
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$R"
touch "$R/done" "$R/started"

pending() {
    grep -v '^#' "$ROOT/bench/gpu_round.phases" | while read -r p; do
        [ -n "$p" ] && ! grep -qx "$p" "$R/started" && echo "$p"
    done | head -1
}

case "${1:-}" in
start)
    if [ -f "$R/pid" ] && kill -0 "$(cat "$R/pid")" 2>/dev/null; then echo "runner alive"; exit 0; fi
    setsid nohup bash "$ROOT/bench/gpu_round.sh" loop >"$R/runner.log" 2>&1 </dev/null &
    echo $! >"$R/pid"; echo "runner started" ;;
loop)
    export PYTHONUNBUFFERED=1 R
    while :; do
        cd "$ROOT" || exit 1
        p="$(pending)"
        if [ -z "$p" ]; then sleep 5; continue; fi
        echo "$p" >>"$R/started"
        echo "$(date +%T) start $p" >>"$R/runner.log"
        ( source "$ROOT/bench/gpu_phases.sh"; "phase_$p" ) >"$R/$p.log" 2>&1
        echo "$p rc=$? $(date +%T)" >>"$R/done"
    done ;;
poll)
    end=$(( $(date +%s) + ${2:-500} ))
    while [ "$(date +%s)" -lt "$end" ]; do
        [ -z "$(pending)" ] && [ "$(wc -l <"$R/started")" -eq "$(wc -l <"$R/done")" ] && break
        sleep 5
    done
    echo "== done:"; cat "$R/done"; echo "== running:"; comm -23 <(sort "$R/started") <(cut -d' ' -f1 "$R/done" | sort)
    for f in "$R"/*.log; do echo "== $(basename "$f") (tail)"; tail -n "${TAILN:-8}" "$f"; done
    if [ -n "${OUT:-}" ]; then
        tar -C "$R" --exclude='*.tmp' -cJf "$OUT/results.tar.xz" --exclude=pack . 2>/dev/null
        for f in "$R"/pack/*; do [ -f "$f" ] && cp "$f" "$OUT/"; done
        ls -la "$OUT"
    fi ;;
*) echo "usage: $0 start|poll SECONDS" >&2; exit 2 ;;
esac
