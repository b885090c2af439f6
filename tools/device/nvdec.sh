#!/bin/bash
# One GPU: the NVDEC loader path (data.decoder=nvdec). Its wheel comes with the others: fetch them with
# `../shared/tools/device-wheels.sh --nvdec` (adds a slim PyNvVideoCodec 2.2.4 wheel to .whl/) and carry .whl.
# The NVDEC tests (the GPU ones compare NVDEC clips with the PyAV path's for the same seed and count bad videos),
# then Kinetics-like synthetic video and its prepared copy, `harness data bench data.decoder=nvdec` (paths pyav,
# pyav_prepared, nvdec, nvdec_prepared per planned shape of the default recipe), then a smoke-scale training run
# that decodes with NVDEC. Back in $OUT (nvdec_tests.log, data_bench_nvdec.json, train_nvdec.log, record).
source tools/device/_setup.sh "$1"
python3 -c "import PyNvVideoCodec as n, torch; print('PyNvVideoCodec', n.__version__, torch.cuda.get_device_name())" \
  || { echo "PyNvVideoCodec missing: run ../shared/tools/device-wheels.sh --nvdec and carry .whl"; exit 2; }
timeout 150 python3 -m pytest -q -rs tests/integration/test_data_nvdec.py tests/unit/test_data_clip_plan.py \
  -p no:cacheprovider > $OUT/nvdec_tests.log 2>&1; tail -6 $OUT/nvdec_tests.log; el tests
cores=$(nproc); w=$((cores - 1))
data="data.name=synthetic data.root=/root/kl data.num_classes=8 data.train_videos=64"
python3 -m harness data synth --preset kinetics-like --out /root/kl --workers $w --quiet | tail -1; el synth
python3 -m harness data prepare --out /root/kl-prepared --workers $w --quiet $data | tail -2; el prepared
timeout $(left 420) python3 -m harness data bench --clips 48 --workers 4,$w --prepared /root/kl-prepared \
  --out $OUT/data_bench_nvdec.json $data data.decoder=nvdec 2>&1 | tail -16; el bench
timeout $(left 570) python3 -m harness train scale=smoke data.decoder=nvdec output_dir=$OUT/train_nvdec \
  > $OUT/train_nvdec.log 2>&1; tail -5 $OUT/train_nvdec.log; el "smoke run with nvdec"
