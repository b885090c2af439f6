#!/bin/bash
# Two GPUs: synchronised-BN check and timing, kinetics_ablation at proxy scale on both GPUs, then (time left)
# per-shape scaling at 1 and 2 processes. Everything comes back in two_gpus.tgz.
source tools/device/_setup.sh "$1"; shift
mkdir -p /root/res/scaling
# The fused synchronised BN against plain BN over the joint batch, over NCCL on both GPUs (fp32 and bf16).
timeout 120 python3 -m pytest -q -p no:cacheprovider tests/integration/test_sync_bn.py 2>&1 | tail -3
[ "${PIPESTATUS[0]}" = 0 ] || { echo "synchronised BN check failed: no runs"; tar czf $OUT/two_gpus.tgz -C /root res; exit 1; }
el sync-bn check
for c in 64 256; do  # one BN layer at the proxy baseline's 4 clips per GPU: fused, portable ops, torch SyncBatchNorm
  timeout 60 python3 -m torch.distributed.run --nproc_per_node=2 --master_port=29612 -m harness bn-bench --batch 4 \
    --channels $c --frames 8 --size 28 2>&1 | grep -v Warning | tail -7
done; el bn-bench
timeout $(left 560) python3 -m harness reproduce --suite kinetics_ablation --scale proxy --results /root/res --no-report \
  num_gpus=2 "$@" > /root/res/reproduce.log 2>&1
echo "reproduce exit $?"; el reproduce; grep -v "it/s\|video/s" /root/res/reproduce.log | tail -14
if [ "$(left 575)" -gt 100 ]; then
  timeout $(( $(left 575) - 10 )) python3 -m torch.distributed.run --nproc_per_node=2 --master_port=29611 -m harness \
    scaling --suite kinetics_ablation --scale proxy --out /root/res/scaling/gpus2.json 2>&1 | grep -v Warning | tail -14
  el scaling 2
fi
tar czf $OUT/two_gpus.tgz -C /root res
