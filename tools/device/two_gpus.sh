#!/bin/bash
# Two GPUs: per-shape scaling at 1 and 2 processes (same global batch), then kinetics_ablation at proxy scale on both.
source tools/device/_setup.sh "$1"; shift
for c in 64 256; do  # one synchronised BN layer vs torch's SyncBatchNorm, at the proxy baseline's 4 clips per GPU
  timeout 60 python3 -m torch.distributed.run --nproc_per_node=2 --master_port=29612 -m harness bn-bench --batch 4 \
    --channels $c --frames 8 --size 28 2>&1 | grep -v Warning | tail -6
done; el bn-bench
mkdir -p /root/res/scaling
CUDA_VISIBLE_DEVICES=0 timeout 90 python3 -m harness scaling --suite kinetics_ablation --scale proxy \
  --out /root/res/scaling/gpus1.json 2>&1 | tail -3; el scaling 1
timeout 110 python3 -m torch.distributed.run --nproc_per_node=2 --master_port=29611 -m harness scaling \
  --suite kinetics_ablation --scale proxy --out /root/res/scaling/gpus2.json 2>&1 | grep -v Warning | tail -14
el scaling 2
timeout $(left 575) python3 -m harness reproduce --suite kinetics_ablation --scale proxy --results /root/res --no-report \
  num_gpus=2 "$@" > /root/res/reproduce.log 2>&1
echo "reproduce exit $?"; el reproduce; grep -v "it/s\|video/s" /root/res/reproduce.log | tail -14
tar czf $OUT/two_gpus.tgz -C /root res
