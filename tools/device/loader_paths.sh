#!/bin/bash
# One GPU host: every loader path on Kinetics-like video beside what the trainer consumes at each planned shape of the
# default recipe (SlowFast R50 8x8, multigrid), and the speedup predicted with the best one. First the NVDEC tests
# when PyNvVideoCodec is installed (`../shared/tools/device-wheels.sh --nvdec`, carry .whl). Then Kinetics-like
# synthetic video, its prepared copy (`harness data prepare`, a keyframe every 16 frames) and frame cache; `harness
# profile` of the default recipe (CUDA graphs); `harness data bench` of every loader path (PyAV and, with
# PyNvVideoCodec, NVDEC on the source and the prepared copy; the frame cache); the profile again with the best path
# within 2x the source's storage (`--data`); with the time left, how PyAV's stages scale with processes
# (pyav_scaling.py). CLIPS (default 360) distinct clips per shape and path, streamed in batches of up to 12 (two per
# worker on 15 workers) for at least 3 s; NVDEC_TESTS=0 skips the tests; NVDEC_THREADS=N sets the NVDEC path's
# decoding threads, NVDEC_ACCESS=indices asks NVDEC for each clip's frames by index instead of seeking to its first
# frame and decoding its span; FRAME_STEP=K prepares the copy keeping every K-th frame; B_FRAMES=N codes N B-frames
# between references in every copy (harness data prepare --b-frames, default 3); LOW_RES=N (default 160, 0: none) adds
# a copy at short side N that the path pyav_prepared_low_res reads for clips of small scale-jitter draws
# (data.low_res_copies), keeping every LOW_RES_FRAME_STEP-th frame (default FRAME_STEP's) with a keyframe every
# LOW_RES_KEYFRAMES kept frames (default 16); BENCH_UNTIL=S (default 500) ends the bench S seconds into the call, with
# the shapes measured by then; NVDEC=0 and CACHE=0 leave out the NVDEC paths and the frame cache (a short call for the
# PyAV paths alone). Back in $OUT (data_bench.json, profile*.json, pyav_scaling.json, logs).
source tools/device/_setup.sh "$1"
cores=$(nproc); w=$((cores - 1))
decoder=""
if [ "${NVDEC:-1}" != 0 ] && python3 -c "import PyNvVideoCodec" 2>/dev/null; then
  decoder="data.decoder=nvdec"
  [ "${NVDEC_TESTS:-1}" = 1 ] && timeout 120 python3 -m pytest -q -rs tests/integration/test_data_nvdec.py tests/unit/test_data_clip_plan.py \
    -p no:cacheprovider > $OUT/nvdec_tests.log 2>&1; tail -3 $OUT/nvdec_tests.log 2>/dev/null; el nvdec tests
fi
data="data.name=synthetic data.root=/root/kl data.num_classes=8 data.train_videos=64"
python3 -m harness data synth --preset kinetics-like --out /root/kl --workers $w --quiet | tail -1; el synth
python3 -m harness data prepare --out /root/kl-prepared --workers $w --quiet ${FRAME_STEP:+--frame-step $FRAME_STEP} \
  ${B_FRAMES:+--b-frames $B_FRAMES} $data | tail -2; el prepared
low_res=${LOW_RES:-160} low_res_arg=""  # a second copy at this short side for the clips of small scale-jitter draws (0: none)
if [ "$low_res" != 0 ]; then
  low_res_step=${LOW_RES_FRAME_STEP:-$FRAME_STEP}
  python3 -m harness data prepare --out /root/kl-prepared-$low_res --short-side $low_res --workers $w --quiet \
    ${low_res_step:+--frame-step $low_res_step} --keyframe-interval ${LOW_RES_KEYFRAMES:-16} ${B_FRAMES:+--b-frames $B_FRAMES} \
    $data | tail -1
  el "prepared at short side $low_res"
  low_res_arg="--low-res /root/kl-prepared-$low_res"
fi
cache_arg=""
if [ "${CACHE:-1}" != 0 ]; then
  python3 -m harness data cache --out /root/kl-cache --workers $w --quiet $data | tail -1; el cached
  cache_arg="--cache /root/kl-cache"
fi
timeout 150 python3 -m harness profile --step cuda_graphs --out $OUT/profile.json 2>&1 | grep -v "shape/s" \
  | tail -3; el profile
# The baseline's shape first; the record is rewritten after every shape, so a bench cut off keeps what it measured.
# A line per path as it is measured, and the main process's stacks every 150 s, go to data_bench.log: a path that
# hangs shows where it waits.
timeout $(left ${BENCH_UNTIL:-500}) python3 tools/device/with_stack_dumps.py 150 data bench --clips ${CLIPS:-360} --workers $w \
  $cache_arg --prepared /root/kl-prepared $low_res_arg --consumer $OUT/profile.json --out $OUT/data_bench.json \
  ${NVDEC_THREADS:+--nvdec-threads $NVDEC_THREADS} ${NVDEC_ACCESS:+--nvdec-access $NVDEC_ACCESS} $data $decoder > $OUT/data_bench.log 2>&1; grep -v "shape/s" $OUT/data_bench.log | grep -v "^  File\|^    " | tail -40
el bench
[ -f $OUT/data_bench.json ] || { echo "no data bench record"; exit 1; }
path=$(python3 -c "import json; r=json.load(open('$OUT/data_bench.json'))
ok=[p for p in r['paths'] if (p['storage_ratio'] or 99) <= 2]
print(max(ok, key=lambda p: min(s['clips_per_s'] or 0 for s in p['shapes']))['name'])")
timeout $(left 540) python3 -m harness profile --step cuda_graphs --data $OUT/data_bench.json:$path \
  --out $OUT/profile_with_$path.json 2>&1 | grep -v "shape/s" | tail -3; el "profile with $path"
[ "$(left 570)" -gt 60 ] && timeout $(left 570) python3 tools/device/pyav_scaling.py /root/kl $OUT/pyav_scaling.json \
  1 4 $w; el "pyav scaling"
