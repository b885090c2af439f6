#!/bin/bash
# One GPU: does padding the stems' 3 input channels to 8 (model.pad_stem_channels) move cuDNN off its generic
# sgemm kernel for I3D's 5x7x7 stem (22% of an I3D step on an H200: results/throughput/h200_kernels_i3d.json)?
# The stem GPU test, then `harness throughput` of I3D and SlowFast at 8 clips, plain loop and CUDA graphs, unpadded
# and padded, with where each step's time goes. Back in $OUT: stem_test.log, throughput_stem.json.
source tools/device/_setup.sh "$1"
timeout 120 python3 -m pytest -q tests/unit/test_models.py -k "stem or padded" -p no:cacheprovider \
  > $OUT/stem_test.log 2>&1; tail -2 $OUT/stem_test.log; el test
timeout $(left 570) python3 -m harness throughput --recipes k400_i3d_r50 k400_slowfast_r50_8x8 --batches 8 \
  --modes plain cuda_graphs --pad-stem-channels 0 8 --kernels 12 --out $OUT/throughput_stem.json 2>&1 \
  | grep -v "step mode/s" | tail -12; el throughput
