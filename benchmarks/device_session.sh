#!/usr/bin/env bash
# One device-machine session (16 cores, one GPU), as issue 33's screens used it: the CUDA tests
# and BODi's time per suggestion on the GPU beside ablation runs on the CPU cores. Results go
# to $OUT (or the folder given): results.db (merge it into data/ablation), logs, scale jsonl.
#   bash benchmarks/device_session.sh "SPEC1;SPEC2" PROBLEMS SEEDS SECONDS
# The device's image has PyTorch, BoTorch and GPyTorch but not Dask: every run has one worker,
# which the runner runs in its own process without Dask. Wheels of other missing packages can
# be carried in .whl (ignored; see ../.library/device/README.md) and are installed first.
set -u
OUT=${OUT:-${5:-/tmp/device_out}}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site \
    .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
fi
python3 -c "import torch, botorch, gpytorch; print(torch.__version__, botorch.__version__, gpytorch.__version__, torch.cuda.is_available(), torch.get_num_threads())" >"$OUT/versions.txt" 2>&1
nproc >>"$OUT/versions.txt"
(
  timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_device.py >"$OUT/gpu_tests.log" 2>&1
  for kernel in "hed*hamming" hed; do
    timeout 120 python3 benchmarks/scale.py --device cuda --dims 1000 --n 1000 --threads 1 \
      --kernel "$kernel" --redo --out "$OUT/scale_cuda.jsonl" >>"$OUT/scale_cuda.log" 2>&1
  done
) &
gpu=$!
python3 benchmarks/parallel_runs.py --methods "$1" --problems "$2" --seeds "$3" \
  --seconds "$4" --jobs 15 --out "$OUT/ablation" >"$OUT/runs.log" 2>&1
wait $gpu
cp "$OUT/ablation/results.db" "$OUT/results.db" 2>/dev/null
tail -n 3 "$OUT/runs.log" "$OUT/gpu_tests.log" "$OUT/scale_cuda.log"
rm -rf "$OUT/ablation"
