#!/bin/bash
# kinetics_ablation at proxy scale trained on all N GPUs of the host (num_gpus=N under torchrun), then per-shape
# scaling of its plan at N, 1 and 2 processes, until SECONDS have passed.
#
# Usage: bash benchmarks/multi_gpu.sh OUT_DIR SECONDS [--only VARIANT ...]
#   the arguments after SECONDS go to `harness reproduce`. Env: SCALING_FIRST=1 measures scaling before the runs.
# Records: OUT_DIR/results/kinetics_ablation/proxy/ (into results/kinetics_ablation/proxy/: the report's setups
# table sets them beside the 1-GPU runs; it starts as a copy of that folder, so recorded runs are not redone and
# a run the budget cut off resumes), OUT_DIR/scaling/gpus<K>.json (into results/scaling/kinetics_ablation/proxy/).
ARGS_USAGE="[--only VARIANT ...]"
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 2
n=$(gpu_count)
res=$OUT/results
mkdir -p "$OUT/scaling" "$res"; cp -rn results/kinetics_ablation "$res/" 2>/dev/null
runs() {  # until three quarters of the budget, or all of it where scaling came first
  local until=$budget; [ "${SCALING_FIRST:-0}" = 1 ] || until=$(( budget * 3 / 4 ))
  [ "$(left $until)" -ge 60 ] || { el "no time left for the runs"; return; }
  timeout "$(left $until)" harness reproduce --suite kinetics_ablation --scale proxy --results "$res" --no-report \
    num_gpus=$n "$@" > "$OUT/reproduce.log" 2>&1
  el "reproduce exit $?"; grep -v "it/s\|video/s" "$OUT/reproduce.log" | tail -14
}
scale() {  # K processes on the first K GPUs
  enough 100 "scaling at $1" || return
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $(( $1 - 1 ))) timeout $(( $(left) - 10 )) torchrun --nproc_per_node=$1 \
    --master_port=2961$1 -m harness scaling --suite kinetics_ablation --scale proxy \
    --out "$OUT/scaling/gpus$1.json" > "$OUT/scaling_gpus$1.log" 2>&1
  el "scaling at $1 exit $?"; grep -v Warning "$OUT/scaling_gpus$1.log" | tail -14
}
if [ "${SCALING_FIRST:-0}" = 1 ]; then
  scale $n; scale 1; [ "$n" -gt 2 ] && scale 2; runs "$@"
else
  runs "$@"; scale $n; scale 1; [ "$n" -gt 2 ] && scale 2
fi
