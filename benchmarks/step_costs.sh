#!/bin/bash
# Where the training step's time goes and what each step option buys (`harness throughput` of I3D and SlowFast at
# their baseline shapes, with where each step's time goes), until SECONDS have passed:
#   stem:     plain loop and CUDA graphs at 8 clips, stems' 3 input channels as they are and padded to 8
#             (model.pad_stem_channels): whether cuDNN leaves its generic kernel for I3D's 5x7x7 stem;
#   plain_bn: plain BN through the Triton kernels (train.plain_bn_impl=triton) against cuDNN's, eager and CUDA graphs,
#             at 8 and 32 clips, stems padded;
#   plain32:  the unpadded plain loop at 32 clips.
#
# Usage: bash benchmarks/step_costs.sh OUT_DIR SECONDS [STAGE ...]   (default: all three stages, in that order)
# Records: OUT_DIR/throughput_<stage>.json (results/throughput/<card>_*.json), each rewritten after every row, so
# a stage the budget cut off keeps what it measured.
ARGS_USAGE="[STAGE ...]"
here=$(dirname "$0")
source "$here/_common.sh"
need_gpus 1
models="k400_i3d_r50 k400_slowfast_r50_8x8"
stages=${*:-stem plain_bn plain32}
for stage in $stages; do
  case $stage in
    stem|plain_bn|plain32) ;;
    *) echo "unknown stage '$stage' (stem, plain_bn, plain32)" >&2; exit 2 ;;
  esac
done
for stage in $stages; do
  case $stage in
    stem) throughput stem --recipes $models --batches 8 --modes plain cuda_graphs --pad-stem-channels 0 8 \
      --kernels 12 ;;
    plain_bn) throughput plain_bn --recipes $models --batches 8 32 --modes eager cuda_graphs --pad-stem-channels 8 \
      --plain-bn-impl cudnn triton ;;
    plain32) throughput plain32 --recipes $models --batches 32 --modes plain ;;
  esac
done
