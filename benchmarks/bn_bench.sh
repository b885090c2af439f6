#!/bin/bash
# One BN layer's training forward + backward (`harness bn-bench`): sub-batch BN at multigrid shapes per
# implementation (cuDNN blocks, fused blocks, interleaved), and, on a host of several GPUs, BN synchronised over all
# of them (fused, portable ops, torch SyncBatchNorm), until SECONDS have passed.
#
# Usage: bash benchmarks/bn_bench.sh OUT_DIR SECONDS
#   sub-batch: res2 of SlowFast's fast pathway at a short-cycle shape, 8k clips of 16x56^2 (post-stem), k = 2, 4, 8;
#   synchronised: 64 and 256 channels at the proxy baseline's clips per GPU (8 in all), 8x28^2.
# Each measurement starts only with 60 s left: the first, which starts CUDA, can take most of a minute.
# Records (text): OUT_DIR/bn_bench.log (results/profile/sub_batch_bn_bench_<card>/), OUT_DIR/bn_bench_sync.log.
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
n=$(gpu_count)
for k in 2 4 8; do
  enough 60 "sub-batch BN at k=$k" || break
  CUDA_VISIBLE_DEVICES=0 timeout "$(left)" harness bn-bench --batch $((8 * k)) --channels 32 --frames 16 --size 56 \
    --splits $k 2>&1 | grep -v Warning | tail -8
done > "$OUT/bn_bench.log"; cat "$OUT/bn_bench.log"; el "sub-batch BN"
[ "$n" -ge 2 ] || exit 0
for c in 64 256; do
  enough 60 "synchronised BN at $c channels" || break
  timeout "$(left)" torchrun --nproc_per_node=$n --master_port=29612 -m harness bn-bench \
    --batch $(( 8 / n > 0 ? 8 / n : 1 )) --channels $c --frames 8 --size 28 2>&1 | grep -v Warning | tail -7
done > "$OUT/bn_bench_sync.log"; cat "$OUT/bn_bench_sync.log"; el "synchronised BN"
