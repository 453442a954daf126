#!/usr/bin/env bash
# Run ON THE GPU MACHINE (the device tool), in the repository root, after bench/gpu/prepare.sh here.
# A task's device time is 15 minutes in all, machine start included, at most 10 minutes a call; so one
# call first, with the issue's goals in order, under a budget that leaves time to spare:
#   run(command="BUDGET=480 bash bench/gpu/run.sh setup cuda-tests mfu-base pack-small", carry=[".gpu"],
#       timeout_s=540)
# then, if `status` still allows a start (no machine starts with under 4 minutes left), with BUDGET =
# its budget_left_s less ~3 minutes for the start and a margin (each call sets up again: nothing stays):
#   run(command="BUDGET=... bash bench/gpu/run.sh setup compile mfu-liao pack-base plan eval", ...)
# Sections, in the order given; each writes one log (and JSON where it has figures) to $OUT (or .gpu/out):
#   setup       install .gpu/whl into /tmp/site
#   cuda-tests  tests/test_cuda.py (autocast, packed forward without host syncs, forked workers, the probe)
#   mfu-base    bench/step_mfu.py: BERT-base 64 x 128, fp32 and bf16, against HF's Trainer and
#               sentence-transformers (issue 25 goal: >= 40 % MFU in bf16 and faster than the Trainer)
#   pack-small  bench/packing.py, a MiniLM-sized model, K = 1, 2, 4, 8 (goal: >= 2.5x trials/GPU-hour)
#   compile     bench/step_mfu.py --compile default,reduce-overhead: BERT-base and MiniLM, bf16, harness only
#   eval        `harness eval --classifier pytorch` of Liao's 8-layer BERT: the STS suite, then each of the
#               8 transfer tasks (a command each) with SentEval's PyTorch classifier on the GPU, the seconds
#               of the encoding and of the fits in each JSON (Liao: about 28 minutes a model for SentEval
#               on a V100)
#   mfu-liao    bench/step_mfu.py: the 8-layer BERT (Liao) 64 x 128 and 64 x 32
#   pack-base   bench/packing.py, BERT-base, K = 1, 2, 4
#   plan        `harness plan lambda_tau_sweep --profile paper` on the GPU (compare with a real run)
# BUDGET (seconds, default 480): no section starts with under 30 s left, and each is stopped (SIGINT, then
# SIGKILL) when the budget runs out, so the call ends in time with the figures of the sections that ran.
# Models whose weights are not here are random models of their configs (harness.model.standin).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-.gpu/out}
BUDGET=${BUDGET:-480}
mkdir -p "$OUT" ../shared
[ -e ../shared/data ] || ln -s "$PWD/.gpu/data" ../shared/data  # where tests/conftest.py looks
export HARNESS_DATA_DIR=$PWD/.gpu/data HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 MLFLOW_DISABLE_TELEMETRY=true
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HARNESS_HOME=/tmp/harness-home
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
FAILED=""
LIAO=google/bert_uncased_L-8_H-512_A-8
step() {  # step NAME CMD...: CMD under what is left of the budget, its output in $OUT/NAME.log
  local name=$1; shift
  local left=$((BUDGET - SECONDS))
  if [ "$left" -lt 30 ]; then echo "== $name: skipped, ${left} s of the budget left"; FAILED="$FAILED $name(skipped)"; return; fi
  echo "== $name: $* (at most ${left} s)"; local t=$SECONDS
  timeout --signal=INT --kill-after=10 "$left" "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}; echo "== $name: rc $rc, $((SECONDS - t)) s"
  [ "$rc" = 0 ] || FAILED="$FAILED $name"
}
standin() { python3 -c "import sys; from pathlib import Path; from harness.model.standin import local_model
print(local_model(sys.argv[1], Path('.gpu/data'))[0])" "$1"; }
for section in "$@"; do
  case $section in
    setup) step setup bash -c "python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
             --upgrade --target /tmp/site .gpu/whl/*.whl && python3 -c 'import harness.commands.cli, mlflow, optuna'" ;;
    cuda-tests) step cuda-tests python3 -m pytest -q -p no:cacheprovider tests/test_cuda.py ;;
    mfu-base) step mfu-bert-base python3 bench/step_mfu.py --model bert-base-uncased --json "$OUT/mfu-bert-base.json" ;;
    pack-small) step pack-small python3 bench/packing.py --model sentence-transformers/all-MiniLM-L6-v2 \
                  --ks 1,2,4,8 --json "$OUT/pack-small.json" ;;
    compile) step compile-bert-base python3 bench/step_mfu.py --model bert-base-uncased --precisions bf16 \
               --against none --compile default,reduce-overhead --json "$OUT/compile-bert-base.json"
             step compile-minilm python3 bench/step_mfu.py --model all-MiniLM-L6-v2 --length 32 --precisions bf16 \
               --against none --compile default,reduce-overhead --json "$OUT/compile-minilm.json" ;;
    eval) model=""; [ $((BUDGET - SECONDS)) -lt 30 ] || model=$(standin $LIAO)
          for part in sts MR CR SUBJ MPQA SST2 SST5 TREC MRPC; do  # one command each: a cut keeps the rest
            if [ $part = sts ]; then tasks=(--suite sts); else tasks=(--tasks $part); fi
            step eval-liao-$part python3 -m harness eval --model "$model" "${tasks[@]}" --classifier pytorch \
              --no-cache --no-progress --json "$OUT/eval-liao-$part.json"
          done ;;
    mfu-liao) step mfu-liao-128 python3 bench/step_mfu.py --model $LIAO --json "$OUT/mfu-liao-128.json"
              step mfu-liao-32 python3 bench/step_mfu.py --model $LIAO --length 32 --json "$OUT/mfu-liao-32.json" ;;
    pack-base) step pack-base python3 bench/packing.py --model bert-base-uncased --ks 1,2,4 --length 64 \
                 --json "$OUT/pack-base.json" ;;
    plan) step plan python3 -m harness plan lambda_tau_sweep --profile paper ;;
    *) echo "unknown section $section (setup cuda-tests mfu-base pack-small compile eval mfu-liao pack-base plan)"
       exit 2 ;;
  esac
done
[ -z "$FAILED" ] || { echo "failed:$FAILED"; exit 1; }
