#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the device tool), in the repository root, after bench/gpu/prepare.sh here:
#   run(command="bash bench/gpu/run.sh setup cuda-tests mfu", carry=[".gpu"], timeout_s=540)
#   run(command="bash bench/gpu/run.sh setup pack-small pack-base plan", carry=[".gpu"], timeout_s=540)
# (two calls: all six sections have not been timed together and may not fit one call's 10 minutes)
# Sections, in the order given; each writes its output to $OUT (or .gpu/out), one log and one JSON each:
#   setup       install .gpu/whl into /tmp/site (a fresh machine needs it once per call: nothing stays)
#   cuda-tests  tests/test_cuda.py (the CUDA path: bf16/fp16 autocast, forked workers on the GPU)
#   mfu         bench/step_mfu.py: BERT-base 64 x 128 and the 8-layer BERT (Liao) 64 x 128 and 64 x 32
#   pack-small  bench/packing.py, a MiniLM-sized model, K = 1, 2, 4, 8
#   pack-base   bench/packing.py, BERT-base, K = 1, 2, 4
#   plan        `harness plan lambda_tau_sweep --profile paper` on the GPU (compare with a real run)
# Models whose weights are not here are random models of their configs (harness.model.standin).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.gpu/out}
mkdir -p "$OUT" ../shared
[ -e ../shared/data ] || ln -s "$PWD/.gpu/data" ../shared/data  # where tests/conftest.py looks
export HARNESS_DATA_DIR=$PWD/.gpu/data HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MLFLOW_DISABLE_TELEMETRY=true
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HARNESS_HOME=/tmp/harness-home
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
FAILED=""
step() { local name=$1; shift; echo "== $name: $*"; local t=$SECONDS; "$@" 2>&1 | tee "$OUT/$name.log"
         local rc=${PIPESTATUS[0]}; echo "== $name: rc $rc, $((SECONDS - t)) s"
         [ "$rc" = 0 ] || FAILED="$FAILED $name"; }
for section in "$@"; do
  case $section in
    setup) step setup bash -c "python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
             --upgrade --target /tmp/site .gpu/whl/*.whl && python3 -c 'import harness.cli, mlflow, optuna'" ;;
    cuda-tests) step cuda-tests python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py ;;
    mfu) step mfu-bert-base python3 bench/step_mfu.py --model bert-base-uncased --json "$OUT/mfu-bert-base.json"
         step mfu-liao-128 python3 bench/step_mfu.py --model google/bert_uncased_L-8_H-512_A-8 --json "$OUT/mfu-liao-128.json"
         step mfu-liao-32 python3 bench/step_mfu.py --model google/bert_uncased_L-8_H-512_A-8 --length 32 \
           --json "$OUT/mfu-liao-32.json" ;;
    pack-small) step pack-small python3 bench/packing.py --model sentence-transformers/all-MiniLM-L6-v2 \
                  --ks 1,2,4,8 --json "$OUT/pack-small.json" ;;
    pack-base) step pack-base python3 bench/packing.py --model bert-base-uncased --ks 1,2,4 --length 64 \
                 --json "$OUT/pack-base.json" ;;
    plan) step plan python3 -m harness plan lambda_tau_sweep --profile paper ;;
    *) echo "unknown section $section (setup cuda-tests mfu pack-small pack-base plan)"; exit 2 ;;
  esac
done
[ -z "$FAILED" ] || { echo "failed:$FAILED"; exit 1; }
