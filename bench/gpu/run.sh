#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the device tool), in the repository root, after bench/gpu/prepare.sh here.
# A task's device time is 15 minutes in all, machine start included, at most 10 minutes a call: issue 54's
# figures in one call, in the order of its goals, under a budget that leaves time to spare:
#   run(command="BUDGET=500 bash bench/gpu/run.sh setup cuda-tests transfer step pack plan", carry=[".gpu"],
#       timeout_s=560)
# Sections, in the order given; each writes one log (and JSON where it has figures) to a scratch folder,
# packed after every section into $OUT/results.tar.gz (the device returns at most 8 files), with gpu.txt:
#   setup       install .gpu/whl into /tmp/site
#   cuda-tests  tests/test_cuda.py (autocast, packed forward without host syncs, forked workers, the probe
#               batched on CUDA against the CPU, a compiled training step with CUDA graphs)
#   transfer    bench/transfer_fits.py: SentEval's PyTorch classifier on the 8 transfer tasks at k = 10 for
#               a 768-d embedding set (a random bert-base-uncased), all fits of a call together on the GPU
#               (goal: under 60 s), and SST5, TREC and MRPC one by one too, as SentEval fits them
#   step        bench/step_mfu.py, bf16: BERT-base 64 x 128 and the MiniLM shape 64 x 32, the harness step
#               compiled (the GPU default) and eager, against HF's Trainer and sentence-transformers
#               (goals: >= 30% MFU at BERT-base, <= 8 ms a MiniLM step, never slower than either)
#   pack        bench/packing.py, MiniLM-sized trials, K = 1, 4, 8 under CUDA MPS (started by run-study)
#               and K = 8 time-sliced (goal: >= 2.5x trials per GPU-hour at the best K)
#   pack8       bench/packing.py at K = 8 under MPS alone (K = 1 from `pack`), for a lease too short for all
#   plan        bench/plan_accuracy.py bench/gpu/plan_check.yaml: `harness plan`'s estimate beside two
#               real trials (compiled steps, STS-B, MR and TREC with the PyTorch classifier at k = 10)
#   mfu-liao    bench/step_mfu.py: the 8-layer BERT (Liao) 64 x 128 and 64 x 32
#   pack-base   bench/packing.py, BERT-base, K = 1, 2, 4
# BUDGET (seconds, default 480): no section starts with under 30 s left, and each is stopped (SIGINT, then
# SIGKILL) when the budget runs out, so the call ends in time with the figures of the sections that ran.
# Models whose weights are not here are random models of their configs (harness.encoders.standin).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.gpu/out}
LOGS=$(mktemp -d /tmp/gpu-logs.XXXX)
BUDGET=${BUDGET:-480}
mkdir -p "$OUT" ../shared
[ -e ../shared/data ] || ln -s "$PWD/.gpu/data" ../shared/data  # where tests/conftest.py looks
export HARNESS_DATA_DIR=$PWD/.gpu/data HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MLFLOW_DISABLE_TELEMETRY=true
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HARNESS_HOME=/tmp/harness-home
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
FAILED=""
LIAO=google/bert_uncased_L-8_H-512_A-8
step() {  # step NAME CMD...: CMD under what is left of the budget, its output in $LOGS/NAME.log
  local name=$1; shift
  local left=$((BUDGET - SECONDS))
  if [ "$left" -lt 30 ]; then echo "== $name: skipped, ${left} s of the budget left"; FAILED="$FAILED $name(skipped)"; return; fi
  echo "== $name: $* (at most ${left} s)"; local t=$SECONDS
  timeout --signal=INT --kill-after=10 "$left" "$@" 2>&1 | tee "$LOGS/$name.log"
  local rc=${PIPESTATUS[0]}; echo "== $name: rc $rc, $((SECONDS - t)) s"
  tar -czf "$OUT/results.tar.gz" -C "$LOGS" .
  [ "$rc" = 0 ] || FAILED="$FAILED $name"
}
standin() { python3 -c "import sys; from pathlib import Path; from harness.encoders.standin import local_model
print(local_model(sys.argv[1], Path('.gpu/data'))[0])" "$1"; }
for section in "$@"; do
  case $section in
    setup) step setup bash -c "python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
             --upgrade --target /tmp/site .gpu/whl/*.whl && python3 -c 'import harness.commands.cli, mlflow, optuna'" ;;
    cuda-tests) step cuda-tests python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py ;;
    transfer) step transfer python3 bench/transfer_fits.py --model bert-base-uncased --presets default \
                --one-by-one SST5,TREC,MRPC --json "$LOGS/transfer.json" ;;
    step) step step-bert-base python3 bench/step_mfu.py --model bert-base-uncased --precisions bf16 \
            --compile auto,false --json "$LOGS/step-bert-base.json"
          step step-minilm python3 bench/step_mfu.py --model all-MiniLM-L6-v2 --length 32 --precisions bf16 \
            --compile auto,false --json "$LOGS/step-minilm.json" ;;
    pack) step pack python3 bench/packing.py --model sentence-transformers/all-MiniLM-L6-v2 --ks 1,4,8 \
            --steps 100 --gpu-sharing auto,time-slicing --json "$LOGS/pack.json" ;;
    pack8) step pack8 python3 bench/packing.py --model sentence-transformers/all-MiniLM-L6-v2 --ks 8 \
             --steps 100 --gpu-sharing auto --json "$LOGS/pack8.json" ;;  # K = 8 alone, for a short lease
    plan) sed "s|model: all-MiniLM-L6-v2|model: $(standin all-MiniLM-L6-v2)|" bench/gpu/plan_check.yaml \
            > /tmp/plan_check.yaml  # the real trials need weights: a random MiniLM saved here
          step plan python3 bench/plan_accuracy.py /tmp/plan_check.yaml ;;
    mfu-liao) step mfu-liao-128 python3 bench/step_mfu.py --model $LIAO --json "$LOGS/mfu-liao-128.json"
              step mfu-liao-32 python3 bench/step_mfu.py --model $LIAO --length 32 --json "$LOGS/mfu-liao-32.json" ;;
    pack-base) step pack-base python3 bench/packing.py --model bert-base-uncased --ks 1,2,4 --length 64 \
                 --json "$LOGS/pack-base.json" ;;
    *) echo "unknown section $section (setup cuda-tests transfer step pack pack8 plan mfu-liao pack-base)"
       exit 2 ;;
  esac
done
[ -z "$FAILED" ] || { echo "failed:$FAILED"; exit 1; }
