#!/bin/bash
# Data-parallel scaling at the paper's per-GPU batch (8 clips of 32x224^2, the K400 plan's shapes), and where one
# GPU's step time goes, until SECONDS have passed.
#
# Usage: bash benchmarks/paper_scaling.sh OUT_DIR SECONDS [STAGE ...]
#   STAGE  GPUS:STEP[:IMPL] (e.g. 0,1:eager, 0,1,2,3:cuda_graphs:triton): `harness scaling --scale paper
#          --per-gpu-batch 8` on those GPUs with that step mode and sub-batch BN; throughput@GPU: `harness throughput`
#          (plain loop, eager, CUDA graphs, compiled at 8 and 32 clips, with where each step's time goes); a stage
#          ending in & runs in the background, `wait` waits for those.
#   Default: every step (eager, cuda_graphs, cuda_graphs:triton) on 1, 2, 4, ... GPUs up to all of them, then
#   throughput@0. A stage starts only with 60 s left; STAGE_S caps each stage's seconds.
# Records: OUT_DIR/scaling/gpus<N>_<step>[_<impl>].json (results/scaling/kinetics_ablation/paper/),
# OUT_DIR/throughput_steps.json (results/throughput/); a log per stage beside them.
ARGS_USAGE="[STAGE ...]"
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
mkdir -p "$OUT/scaling"
stage_seconds() {  # the time left, less 10 s for the stage's end, at most STAGE_S
  local limit=$(( $(left) - 10 ))
  [ -n "$STAGE_S" ] && [ "$STAGE_S" -lt "$limit" ] && limit=$STAGE_S
  echo $limit
}
scaling() {  # GPUS STEP [IMPL]: one `harness scaling` record at 8 clips per GPU
  local gpus=$1 step=$2 impl=${3:-auto} n name
  n=$(echo "$gpus" | tr , '\n' | wc -l); name=gpus${n}_${step}$([ "$impl" = auto ] || echo "_$impl")
  enough 60 $name || return
  CUDA_VISIBLE_DEVICES=$gpus NCCL_DEBUG=WARN timeout "$(stage_seconds)" torchrun --nproc_per_node=$n \
    --master_port=$((29500 + ${gpus:0:1} * 10 + n)) -m harness scaling --suite kinetics_ablation --scale paper \
    --per-gpu-batch 8 --step $step --sub-batch-bn $impl --out "$OUT/scaling/$name.json" > "$OUT/$name.log" 2>&1
  el "$name exit $?"; grep -v Warning "$OUT/$name.log" | tail -13
}
stage() {
  case $1 in
    throughput@*) CUDA_VISIBLE_DEVICES=${1#throughput@} throughput steps --modes plain eager cuda_graphs \
      --batches 8 32 --kernels 12 ;;
    *) IFS=: read -r gpus step impl <<< "$1"; scaling $gpus $step $impl ;;
  esac
}
if [ $# -eq 0 ]; then
  ngpu=$(gpu_count)
  for (( n = 1; n <= ngpu; n *= 2 )); do
    gpus=$(seq -s, 0 $((n - 1)))
    set -- "$@" $gpus:eager $gpus:cuda_graphs $gpus:cuda_graphs:triton
  done
  [ $(( n / 2 )) -lt "$ngpu" ] && set -- "$@" $(seq -s, 0 $((ngpu - 1))):eager $(seq -s, 0 $((ngpu - 1))):cuda_graphs
  set -- "$@" throughput@0
fi
for s in "$@"; do
  case $s in
    wait) wait ;;
    *\&) stage "${s%&}" & ;;
    *) stage "$s" ;;
  esac
done
wait
