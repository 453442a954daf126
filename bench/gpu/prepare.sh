#!/usr/bin/env bash
# Run HERE (the CPU machine with PyPI), in the repository root, before a device call (issue 25's GPU
# figures): puts into .gpu/ (ignored by git, carried with `carry: [".gpu"]`, 64 MiB at most) what the GPU
# machine lacks: wheels for its Python 3.12 of the harness's dependencies that its image does not hold
# (torch, transformers, numpy, pandas, ... stay the image's own), and the few data files the checks read.
# Then, on the device: `bash bench/gpu/run.sh SECTION...` (see there).
set -euo pipefail
cd "$(dirname "$0")/../.."
EXCLUDE=$(git rev-parse --git-path info/exclude)  # a worktree's too
mkdir -p "$(dirname "$EXCLUDE")"
grep -qx '/.gpu/' "$EXCLUDE" 2>/dev/null || echo '/.gpu/' >> "$EXCLUDE"
DATA=${HARNESS_DATA_DIR:-../shared/data}
rm -rf .gpu && mkdir -p .gpu/whl .gpu/data/wiki .gpu/data/tokenizers
# The GPU image's packages (/work/.library/device/KINDS.md, read 2026-11-17): never carried, so that the
# image's torch, numpy and CUDA libraries are the ones imported.
IMAGE="absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs certifi
charset-normalizer click cloudpickle colorama contourpy coverage cycler filelock fonttools frozenlist fsspec
h11 h5py hf-xet httpcore httpx huggingface-hub idna iniconfig jinja2 joblib kiwisolver markdown
markdown-it-py markupsafe matplotlib mdurl mpmath msgpack multidict narwhals networkx numpy packaging pandas pillow
pip pluggy prometheus-client propcache protobuf psutil pyarrow pygments pyparsing pytest pytest-xdist
execnet python-dateutil pyyaml regex requests rich safetensors scikit-learn scipy sentence-transformers
setuptools six sympy tabulate threadpoolctl tokenizers torch tqdm transformers triton typer
typing-extensions urllib3 werkzeug wheel wrapt xxhash yarl zipp"
python3 -m pip download --quiet --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform any -d .gpu/all "mlflow>=3.0,<3.18" "optuna>=4.0" "pydantic>=2.6" "datasets>=2.19"
for wheel in .gpu/all/*.whl; do
  name=$(basename "$wheel" | cut -d- -f1 | tr '_A-Z' '-a-z')
  if ! grep -qw -- "$name" <<<"$IMAGE"; then mv "$wheel" .gpu/whl/; fi
done
rm -rf .gpu/all
cp "$DATA/wiki/wiki1m_head.txt" .gpu/data/wiki/
cp -r "$DATA/tokenizers/bert-base-uncased" .gpu/data/tokenizers/
cp -r "$DATA/senteval" .gpu/data/  # STS12-16, STS-B, SICK-R, the transfer tasks, SNLI dev/test (19 MB)
echo "carry .gpu: $(du -sm .gpu | cut -f1) MB ($(ls .gpu/whl | wc -l) wheels); the limit is 64 MiB with the tree"
