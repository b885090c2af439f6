#!/bin/bash
# One GPU, for an H100 record of where the training step's time goes and what each step option buys:
# 1. the padded-stem and Triton BN GPU tests, then the host's cost per BN layer (tools/device/bn_host_cost.py: why
#    eager steps with the Triton sub-batch BN take twice their graphed time);
# 2. stem padding (as stem_padding.sh): I3D and SlowFast at 8 clips, plain loop and CUDA graphs, stems unpadded and
#    padded to 8 channels, with where each step's time goes;
# 3. compiled steps against the plain loop at 8 and 32 clips for both models, stems padded, with where the time goes;
# 4. plain BN through the Triton kernels (train.plain_bn_impl=triton) against cuDNN's, eager and CUDA graphs, at 8
#    and 32 clips, stems padded;
# 5. the unpadded plain loop at 32 clips (the one at 8 is in 2).
# Each stage's record is rewritten after every row, so a stage cut off keeps what it measured. Back in $OUT:
# gpu_tests.log, bn_host_cost.json, throughput_stem.json, throughput_compile.json, throughput_plain_bn.json,
# throughput_plain32.json.
source tools/device/_setup.sh "$1"
models="k400_i3d_r50 k400_slowfast_r50_8x8"
timeout 120 python3 -m pytest -q tests/unit/test_models.py tests/unit/test_multigrid_bn.py -k "stem or padded or triton_plain" \
  -p no:cacheprovider > $OUT/gpu_tests.log 2>&1; tail -2 $OUT/gpu_tests.log; el tests
timeout 120 python3 tools/device/bn_host_cost.py $OUT/bn_host_cost.json 2>&1 | head -50; el bn host cost
throughput() {  # $1: record name; the rest: harness throughput arguments
  local name=$1; shift
  timeout $(left 570) python3 -m harness throughput --recipes $models "$@" --out $OUT/throughput_$name.json 2>&1 \
    | grep -v "step mode/s" | grep -v "^    " | tail -30; el "$name"
}
throughput stem --batches 8 --modes plain cuda_graphs --pad-stem-channels 0 8 --kernels 12
throughput compile --batches 8 32 --modes plain compile --pad-stem-channels 8 --kernels 12
throughput plain_bn --batches 8 32 --modes eager cuda_graphs --pad-stem-channels 8 --plain-bn-impl cudnn triton
throughput plain32 --batches 32 --modes plain
