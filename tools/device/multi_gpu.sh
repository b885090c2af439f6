#!/bin/bash
# N GPUs (2 on nvidia-h100-x2, 8 on an 8-GPU kind): fused-BN checks and timings (synchronised and sub-batch),
# kinetics_ablation at proxy scale on all N GPUs, then (time left) per-shape scaling at N, 1 and 2 processes. Back in multi_gpu.tgz:
# res/kinetics_ablation/proxy/*.json (copy into results/kinetics_ablation/proxy/: the report's setups table sets
# them beside the 1-GPU runs) and res/scaling/gpusK.json (into results/scaling/kinetics_ablation/proxy/).
# Usage: bash tools/device/multi_gpu.sh COMMIT N [--only VARIANT ...]; a second call (after copying the records
# back) goes on with the runs the first did not finish; with SCALING_FIRST=1 it skips the checks and bn-bench and
# measures scaling before the runs.
source tools/device/_setup.sh "$1"
n=$2; shift 2
mkdir -p /root/res/scaling; cp -r results/kinetics_ablation /root/res/ 2>/dev/null  # recorded runs are not redone
checks() {
# The fused synchronised BN against plain BN over the joint batch, over NCCL on two GPUs (fp32 and bf16).
# And the fused sub-batch BN against an independent implementation (one GPU). CPU variants run in CI.
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/integration/test_sync_bn.py \
  tests/unit/test_multigrid_bn.py 2>&1 | grep -v "^\s*$\|Warning\|warn\|^  " | tail -25
[ "${PIPESTATUS[0]}" = 0 ] || { echo "fused BN check failed: no runs"; tar czf $OUT/multi_gpu.tgz -C /root res; return 1; }
el fused-bn check
for c in 64 256; do  # one BN layer at the proxy baseline's clips per GPU: fused, portable ops, torch SyncBatchNorm
  timeout 60 python3 -m torch.distributed.run --nproc_per_node=$n --master_port=29612 -m harness bn-bench \
    --batch $(( 8 / n > 0 ? 8 / n : 1 )) --channels $c --frames 8 --size 28 2>&1 | grep -v Warning | tail -7
done
for k in 2 8; do  # sub-batch BN on one GPU at a coarse proxy phase's 64 clips: cuDNN blocks, fused blocks, interleaved
  CUDA_VISIBLE_DEVICES=0 timeout 60 python3 -m harness bn-bench --batch 64 --channels 64 --frames 8 --size 20 \
    --splits $k 2>&1 | grep -v Warning | tail -5
done; el bn-bench
}
runs() {
timeout $(left ${RUNS_UNTIL:-560}) python3 -m harness reproduce --suite kinetics_ablation --scale proxy --results /root/res --no-report \
  num_gpus=$n "$@" > /root/res/reproduce.log 2>&1
echo "reproduce exit $?"; el reproduce; grep -v "it/s\|video/s" /root/res/reproduce.log | tail -14
}
scale() {  # K processes on the first K GPUs, if 100 s are left
  [ "$(left 575)" -gt 100 ] || return
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $(( $1 - 1 ))) timeout $(( $(left 575) - 10 )) python3 -m torch.distributed.run \
    --nproc_per_node=$1 --master_port=2961$1 -m harness scaling --suite kinetics_ablation --scale proxy \
    --out /root/res/scaling/gpus$1.json 2>&1 | grep -v Warning | tail -14
  el scaling $1
}
if [ "$SCALING_FIRST" = 1 ]; then  # a follow-up call: the checks passed before; scaling, then the runs left
  scale $n; scale 1; [ "$n" -gt 2 ] && scale 2; runs "$@"
else
  checks || exit 1; runs "$@"; scale $n; scale 1; [ "$n" -gt 2 ] && scale 2
fi
tar czf $OUT/multi_gpu.tgz -C /root res
