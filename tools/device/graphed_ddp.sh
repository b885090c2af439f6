#!/bin/bash
# N GPUs of one host (2 on nvidia-h100-x2): the GPU test that graphed DDP steps train like eager DDP (losses and
# weights; BN synchronised over both GPUs, sub-batch and plain shapes), then a smoke-scale training run under
# torchrun on N GPUs with train.step=cuda_graphs (the default step is eager; train.step=auto picks graphs on GPUs).
# Back in $OUT: graphed_ddp_test.log,
# train.log and the run's record.json.
# Usage: bash tools/device/graphed_ddp.sh COMMIT N
source tools/device/_setup.sh "$1"
n=$2
CUDA_VISIBLE_DEVICES=0,1 timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/integration/test_step_modes.py \
  -k ddp > $OUT/graphed_ddp_test.log 2>&1
el "graphed DDP test exit $?"; tail -3 $OUT/graphed_ddp_test.log
timeout $(left 575) python3 -m torch.distributed.run --nproc_per_node=$n -m harness train scale=smoke num_gpus=$n train.step=cuda_graphs \
  output_dir=/root/train_ddp > $OUT/train.log 2>&1
el "smoke training on $n GPUs exit $?"; grep -v "it/s\|Warning" $OUT/train.log | tail -6
cp /root/train_ddp/record.json $OUT/ 2>/dev/null && python3 -c "
import json; r=json.load(open('$OUT/record.json')); print('step', r['step'], '| gpus', r['spec']['num_gpus'])"
