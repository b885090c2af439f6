#!/bin/bash
# Four GPUs (nvidia-h100-x4 or nvidia-h200-x4): data-parallel scaling at the paper's per-GPU batch (8 clips of
# 32x224^2, the K400 plan's shapes), and where a single GPU's step time goes.
#   GPUs 0-1: the test that graphed DDP steps train like eager DDP, then `harness scaling` on 2 GPUs;
#   GPU 2:    `harness scaling` on 1 GPU (eager, CUDA graphs, CUDA graphs with the Triton sub-batch BN);
#   GPU 3:    `harness throughput` (plain loop, eager, CUDA graphs, compiled) at 8 and 32 clips, with kernels;
#   then all four: `harness scaling` on 4 GPUs (eager, CUDA graphs, then Triton as time allows).
# Back in paper_scaling.tgz: res/scaling/gpusN_STEP[_triton].json (into results/scaling/kinetics_ablation/paper/),
# res/throughput.json (into results/throughput/), logs.
# Usage: bash tools/device/paper_scaling.sh COMMIT [STAGE ...]: with stages only those, in order: GPUS:STEP[:IMPL]
# (e.g. 0,1,2,3:eager, 0,1:cuda_graphs:triton), test@GPUS (the graphed-DDP test, in the background), wait. DUMP_STACKS=SECONDS writes every process's stacks to its log that
# often (tools/device/with_stack_dumps.py): where a run that hangs waits; STAGE_S caps each stage's seconds.
source tools/device/_setup.sh "$1"; shift
res=/root/res; mkdir -p $res/scaling
scaling() {  # GPUS STEP [triton]: one `harness scaling` record at 8 clips per GPU, if 60 s are left
  local gpus=$1 step=$2 impl=${3:-auto} n name
  n=$(echo "$gpus" | tr , '\n' | wc -l); name=gpus${n}_${step}$([ "$impl" = auto ] || echo "_$impl")
  [ "$(left 575)" -gt 60 ] || { el "no time for $name"; return; }
  local run="-m harness" limit=$(( $(left 575) - 10 ))
  [ -n "$DUMP_STACKS" ] && run="tools/device/with_stack_dumps.py $DUMP_STACKS"
  [ -n "$STAGE_S" ] && [ "$STAGE_S" -lt "$limit" ] && limit=$STAGE_S
  CUDA_VISIBLE_DEVICES=$gpus NCCL_DEBUG=WARN timeout $limit python3 -m torch.distributed.run \
    --nproc_per_node=$n --master_port=$((29500 + ${gpus:0:1} * 10 + n)) $run scaling --suite kinetics_ablation --scale paper \
    --per-gpu-batch 8 --step $step --sub-batch-bn $impl --out $res/scaling/$name.json > $res/$name.log 2>&1
  el "$name exit $?"; grep -v Warning $res/$name.log | tail -13
}
ddp_test() {  # GPUS: the test that graphed DDP steps train like eager DDP (2 GPUs)
  CUDA_VISIBLE_DEVICES=$1 timeout ${TEST_S:-240} python3 -m pytest -q -p no:cacheprovider -m gpu \
    tests/integration/test_step_modes.py -k ddp > $res/graphed_ddp_test.log 2>&1
  el "graphed DDP test exit $?"; tail -3 $res/graphed_ddp_test.log
}
if [ $# -gt 0 ]; then  # stages: GPUS:STEP[:IMPL], test@GPUS (in the background), wait (for the background)
  for stage in "$@"; do
    case $stage in
      test@*) ddp_test ${stage#test@} & ;;
      wait) wait ;;
      *) IFS=: read -r gpus step impl <<< "$stage"; scaling $gpus $step $impl ;;
    esac
  done
  wait; tar czf $OUT/paper_scaling.tgz -C /root res; exit
fi
( ddp_test 0,1; scaling 0,1 eager; scaling 0,1 cuda_graphs ) &
( scaling 2 eager; scaling 2 cuda_graphs; scaling 2 cuda_graphs triton ) &
(
  CUDA_VISIBLE_DEVICES=3 timeout 330 python3 -m harness throughput --modes plain eager cuda_graphs compile \
    --batches 8 32 --kernels 12 --out $res/throughput.json > $res/throughput.log 2>&1
  el "throughput exit $?"; grep -v "step mode/s" $res/throughput.log | head -24
) &
wait
scaling 0,1,2,3 eager; scaling 0,1,2,3 cuda_graphs; scaling 0,1,2,3 cuda_graphs triton; scaling 0,1 cuda_graphs triton
tar czf $OUT/paper_scaling.tgz -C /root res
