#!/bin/bash
# One GPU, for an H100 record of where the training step's time goes and what each step option buys:
# 1. the padded-stem GPU tests, then the host's cost per BN layer (tools/device/bn_host_cost.py: why eager steps
#    with the Triton sub-batch BN take twice their graphed time);
# 2. stem padding (as stem_padding.sh): I3D and SlowFast at 8 clips, plain loop and CUDA graphs, stems unpadded and
#    padded to 8 channels, with where each step's time goes;
# 3. compiled steps against the plain loop at 8 and 32 clips for both models, stems padded, and the unpadded plain
#    loop at 32 clips (the unpadded one at 8 is in 2).
# Back in $OUT: stem_test.log, bn_host_cost.json, throughput_stem.json, throughput_compile.json,
# throughput_plain32.json.
source tools/device/_setup.sh "$1"
models="k400_i3d_r50 k400_slowfast_r50_8x8"
timeout 120 python3 -m pytest -q tests/unit/test_models.py -k "stem or padded" -p no:cacheprovider \
  > $OUT/stem_test.log 2>&1; tail -2 $OUT/stem_test.log; el test
timeout 120 python3 tools/device/bn_host_cost.py $OUT/bn_host_cost.json 2>&1 | head -50; el bn host cost
timeout $(left 570) python3 -m harness throughput --recipes $models --batches 8 --modes plain cuda_graphs \
  --pad-stem-channels 0 8 --kernels 12 --out $OUT/throughput_stem.json 2>&1 | grep -v "step mode/s" | tail -12
el stem padding
timeout $(left 570) python3 -m harness throughput --recipes $models --batches 32 --modes plain \
  --out $OUT/throughput_plain32.json 2>&1 | grep -v "step mode/s" | tail -4; el plain 32
timeout $(left 570) python3 -m harness throughput --recipes $models --batches 8 32 --modes plain compile \
  --pad-stem-channels 8 --kernels 12 --out $OUT/throughput_compile.json 2>&1 | grep -v "step mode/s" | tail -12
el compile
