#!/bin/bash
# CUDA graphs under DDP on N GPUs (2 on nvidia-h100-x2): the 2-GPU test that graphed DDP steps train like eager
# DDP (losses and weights; BN synchronised over both GPUs, sub-batch and plain shapes), then, if it passed,
# `harness scaling --step cuda_graphs` at N and 1 processes. Back in graphed_ddp.tgz: res/scaling/gpusK_graphs.json
# (into results/scaling/kinetics_ablation/proxy/; the report gives graphed steps their own scaling table).
# Usage: bash tools/device/graphed_ddp.sh COMMIT N
source tools/device/_setup.sh "$1"
n=$2
mkdir -p /root/res/scaling
timeout 240 python3 -m pytest -q -p no:cacheprovider -m gpu tests/integration/test_step_modes.py \
  2>&1 | grep -v "^\s*$\|Warning\|warn\|^  " | tail -25
[ "${PIPESTATUS[0]}" = 0 ] || { echo "graphed DDP test failed: no scaling"; tar czf $OUT/graphed_ddp.tgz -C /root res; exit 1; }
el graphed-ddp test
for k in $n 1; do
  [ "$(left 575)" -gt 90 ] || break
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $(( k - 1 ))) timeout $(( $(left 575) - 10 )) python3 -m torch.distributed.run \
    --nproc_per_node=$k --master_port=2963$k -m harness scaling --suite kinetics_ablation --scale proxy \
    --step cuda_graphs --out /root/res/scaling/gpus${k}_graphs.json 2>&1 | grep -v Warning | tail -14
  el scaling $k
done
tar czf $OUT/graphed_ddp.tgz -C /root res
