#!/bin/bash
# train.step=compile_graphs (the compiled step captured into a CUDA graph per shape) against the plain loop, and what
# Inductor's caches leave of its compile time, until SECONDS have passed.
#
# Usage: bash benchmarks/compile_graphs.sh OUT_DIR SECONDS
# `harness throughput` at 8 clips: the plain loop (stems as they are), then compile_graphs with stems padded to 8
# channels, with where the time goes; then compile_graphs again in a new process, which finds the compiled steps in
# the compile caches: its setup_s is what a later run at the same shapes pays. Each compiled row keeps its compile
# time's stages. Env: MODELS (default "k400_i3d_r50 k400_slowfast_r50_8x8"; I3D alone compiles faster, as the
# records' compile times in docs/performance.md show).
# Records: OUT_DIR/throughput_plain8.json, throughput_compile_graphs.json, throughput_compile_graphs_cached.json
# (results/throughput/<card>_compile_graphs*.json).
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
models=${MODELS:-"k400_i3d_r50 k400_slowfast_r50_8x8"}
throughput plain8 --recipes $models --batches 8 --modes plain
throughput compile_graphs --recipes $models --batches 8 --modes compile_graphs --pad-stem-channels 8 --kernels 12
throughput compile_graphs_cached --recipes $models --batches 8 --modes compile_graphs --pad-stem-channels 8
