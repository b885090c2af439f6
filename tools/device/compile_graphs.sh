#!/bin/bash
# One GPU: train.step=compile_graphs (the compiled step captured into a CUDA graph per shape). Its GPU test against
# the eager step and the padded-stem GPU test, then `harness throughput` of I3D and SlowFast at 8 clips: the plain
# loop (stems as they are) and compile_graphs with stems padded to 8 channels, with where the time goes.
# Then the compiled steps again in a new process, which should find them in the compile caches. Back in $OUT:
# gpu_tests.log, throughput_plain8.json, throughput_compile_graphs.json, throughput_compile_graphs_cached.json.
# MODELS="k400_i3d_r50" times only those recipes; TESTS=0 skips the GPU tests (a short call: I3D alone compiles in
# about 46 s on an H100, SlowFast in about 110 s).
source tools/device/_setup.sh "$1"
models=${MODELS:-"k400_i3d_r50 k400_slowfast_r50_8x8"}
if [ "${TESTS:-1}" != 0 ]; then
  timeout 200 python3 -m pytest -q tests/integration/test_step_modes.py tests/unit/test_models.py -p no:cacheprovider \
    -k "(trains_like_the_eager_step and compile_graphs) or padded_stem_trains" > $OUT/gpu_tests.log 2>&1
  tail -3 $OUT/gpu_tests.log; el tests
fi
timeout $(left 400) python3 -m harness throughput --recipes $models --batches 8 --modes plain \
  --out $OUT/throughput_plain8.json 2>&1 | grep -v "step mode/s" | tail -4; el plain
timeout $(left 400) python3 -m harness throughput --recipes $models --batches 8 --modes compile_graphs \
  --pad-stem-channels 8 --kernels 12 --out $OUT/throughput_compile_graphs.json 2>&1 | grep -v "step mode/s" \
  | grep -v "^    " | tail -14; el compile_graphs
# The same again in a new process: Inductor's caches (compile_cache_dir, beside the harness's data) should spare it
# the compiling, so its setup_s is what a later run at the same shapes pays.
timeout $(left 560) python3 -m harness throughput --recipes $models --batches 8 --modes compile_graphs \
  --pad-stem-channels 8 --out $OUT/throughput_compile_graphs_cached.json 2>&1 | grep -v "step mode/s" \
  | grep -v "^    " | tail -4; el compile_graphs cached
