#!/usr/bin/env bash
# Run a command as it runs on an AVX2-only CPU (no AVX-512, no native bf16), on a CPU that has them:
#
#     sudo bash bench/as_avx2.sh make test        # or: make demo, .venv/bin/python bench/train_speed.py
#
# Issue 23's budgets are set for 2-core AVX2-only machines, where bf16 autocast is emulated and the harness
# trains and evaluates in fp32 (`precision: auto`, harness/device.py). On a newer CPU this script makes
# every layer see the older one, in a mount namespace of the command's own (needs root: unshare, mount):
# - /proc/cpuinfo without the avx512* and amx_* flags: harness.device.native_cpu_bf16() is False, so
#   `auto` resolves to fp32 and the runs record cpu.native_bf16 false;
# - ATEN_CPU_CAPABILITY=avx2: PyTorch's own kernels dispatch to their AVX2 builds (cpu.capability AVX2);
# - ONEDNN_MAX_CPU_ISA=AVX2, MKL_ENABLE_INSTRUCTIONS=AVX2: oneDNN's and MKL's kernels too (a bf16 matmul
#   becomes ~80x slower, as on the real thing).
# What it cannot change is the machine's speed per core: shared VMs differ 1.5-2x between sessions.
set -euo pipefail
if [ "$#" -eq 0 ]; then
  echo "usage: bash bench/as_avx2.sh COMMAND [ARGS...]   (runs COMMAND as on an AVX2-only CPU; needs root)" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
  echo "bench/as_avx2.sh needs root and unshare (util-linux) for its own /proc/cpuinfo; run it with sudo" >&2
  exit 2
fi
export ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
# In a mount namespace of the command's own: a copy of /proc/cpuinfo without those flags, bound over it
# (its file is removed at once: the bind keeps it), then the command in place of the shells, so that
# signals (Ctrl-C, kill, timeout) reach it; under sudo it runs as the invoking user again (the files it
# writes, .venv and .harness say, stay theirs).
exec unshare --mount bash -c '
  copy=$(mktemp) && sed -E "s/ (avx512[a-z0-9_]*|amx_[a-z0-9_]*)//g" /proc/cpuinfo >"$copy" &&
    chmod 644 "$copy" && mount --bind "$copy" /proc/cpuinfo
  status=$?
  rm -f "$copy"
  [ "$status" = 0 ] || exit "$status"
  if [ -n "${SUDO_UID:-}" ]; then
    exec setpriv --reuid="$SUDO_UID" --regid="$SUDO_GID" --init-groups "$@"
  fi
  exec "$@"' as_avx2 "$@"
