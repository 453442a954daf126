"""Worker processes of `run-study --workers N`, and the coordinator that only watches (`--workers 0`).

N >= 2: N `harness worker` processes on this machine, each pinned to one GPU (CUDA_VISIBLE_DEVICES; K
consecutive workers share one with --trials-per-gpu K, harness.fleet.placement) and to `threads` CPU threads,
forked from a server that imported the harness once (harness.fleet.forked: a worker starts in milliseconds
instead of ~8 s of imports). A worker that exits abnormally (killed, preempted, crashed) has its running
trial failed and queued again at once (harness.fleet.recovery), and a worker killed by a signal is replaced
while trials remain (at most N replacements).

0: the trials are run by `harness worker` processes started elsewhere (other machines, Slurm, Kubernetes,
docker-compose); the coordinator keeps the parent run open, fails trials whose heartbeat stopped (so that
they are queued again) and returns when every trial has ended. Needs a storage with heartbeats (RDB).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import optuna
import torch
from tqdm.auto import tqdm

from harness.errors import HarnessError
from harness.fleet import forked
from harness.fleet.mps import Sharing, gpu_sharing
from harness.fleet.placement import gpu_of_each_worker
from harness.fleet.recovery import others_pending, others_running, requeue_dead_worker, wait_for_others
from harness.fleet.signals import stop_signal
from harness.resolve.study_spec import ResolvedStudy
from harness.study.optuna_study import default_storage, done_count, remaining
from harness.study.progress_bar import study_bar, update_bar
from harness.tracking.tracker import Tracker


def visible_gpus() -> list[str]:
    """GPU ids to hand out to workers: CUDA_VISIBLE_DEVICES if set, else every device torch sees."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip()]
    return [str(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []


@dataclass
class WorkerSettings:
    """What every worker of one study is started with."""

    storage: str | None
    tracking_uri: str
    data_dir: Path
    heartbeat: int
    threads: int
    progress: bool
    per_gpu: int = 1  # workers sharing each GPU (--trials-per-gpu)
    sharing: str = "auto"  # how they share it (--gpu-sharing; harness.fleet.mps)

    def command(self, study: ResolvedStudy, position: int) -> list[str]:
        """The worker's command line; its storage goes in its environment (`environment`): a URL with a
        password on a command line is shown by `ps` to every user."""
        cmd = [sys.executable, "-m", "harness", "worker", study.path, "--profile", study.profile]
        cmd += ["--data-dir", str(self.data_dir)]
        cmd += ["--tracking-uri", self.tracking_uri, "--position", str(position)]
        cmd += ["--heartbeat", str(self.heartbeat), "--threads", str(self.threads), *study.override_argv]
        cmd += ["--study-name", study.name] if study.derived_from else []  # the coordinator's, not re-derived
        return cmd + ([] if self.progress else ["--no-progress"])

    def environment(self) -> dict[str, str]:
        return {
            **os.environ,
            "OMP_NUM_THREADS": str(self.threads),
            "HARNESS_STORAGE": self.storage or default_storage(),
        }


def run_local_workers(
    study: ResolvedStudy, opt: optuna.Study, tracker: Tracker, settings: WorkerSettings, workers: int
) -> None:
    """Start `workers` worker processes and supervise them until the study has no trial left; K > 1 per
    GPU under CUDA MPS where it can be had (harness.fleet.mps), stopped again when they are done."""
    gpus = visible_gpus()
    placed = gpu_of_each_worker(workers, gpus, settings.per_gpu)
    sharing = gpu_sharing(settings.sharing, gpus, settings.per_gpu)
    if sharing.note:
        tqdm.write(sharing.note)
    try:
        _supervise(study, opt, tracker, settings, workers, placed, sharing)
    finally:
        sharing.stop()


def _supervise(study: ResolvedStudy, opt: optuna.Study, tracker: Tracker, settings: WorkerSettings,
               workers: int, placed: list[str | None], sharing: Sharing) -> None:  # fmt: skip
    host = socket.gethostname()

    def start(index: int) -> subprocess.Popen[bytes] | forked.ForkedCommand:
        env = settings.environment()
        gpu = placed[index]
        if gpu is not None:
            env.update(sharing.environment, CUDA_VISIBLE_DEVICES=gpu, HARNESS_GPU_SHARING=sharing.mode)
        command = settings.command(study, index + 1)
        if forked.available():  # a fork of the preloaded server: no ~8 s of imports per worker
            return forked.start(command[3:], env)
        return subprocess.Popen(command, env=env)

    procs = {index: start(index) for index in range(workers)}
    replacements = 0
    abnormal: list[int] = []
    bar = study_bar(study, opt, settings.progress)
    try:
        while procs:
            time.sleep(1.0)
            for index, proc in list(procs.items()):
                code = proc.poll()
                if code is None:
                    continue
                del procs[index]
                if code == 0:
                    continue
                abnormal.append(code)
                how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
                lost = requeue_dead_worker(opt, tracker, f"{host}:{proc.pid}", how)
                tqdm.write(f"worker {index + 1} (pid {proc.pid}) {how}; {lost} trial(s) queued again")
                if code < 0 and replacements < workers and remaining(opt, study) > 0:
                    replacements += 1
                    procs[index] = start(index)
            update_bar(bar, opt)
    except BaseException as exc:  # Ctrl-C, SIGTERM, or an error here: no worker is left behind
        _stop(list(procs.values()), stop_signal(exc))
        raise
    finally:
        bar.close()
    if abnormal and all(code > 0 for code in abnormal) and not done_count(opt):
        raise HarnessError(f"every worker failed (exit codes {abnormal}); see their output above")


def _stop(procs: list[subprocess.Popen[bytes] | forked.ForkedCommand], how: int = signal.SIGINT) -> None:
    """Pass the interruption on (SIGINT, or SIGTERM for SIGTERM): each worker marks its trial interrupted
    and ends its run with the reason; then make sure they are gone."""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(how)
    for proc in procs:
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()


REQUEUE_SETTLE = 1.0  # seconds: see watch_external_workers
IDLE_NOTICE = 60.0  # seconds with trials to run and none running before the coordinator says so


def watch_external_workers(study: ResolvedStudy, opt: optuna.Study, tracker: Tracker, progress: bool) -> None:
    """`--workers 0`: wait until every trial has ended, failing (and so re-queueing) stale ones. When all
    seem ended, look once more after `REQUEUE_SETTLE`: a worker that has just failed a lost trial (Optuna
    writes FAIL, then calls harness.fleet.recovery's handler) queues it again a moment later, and a
    coordinator that concluded in between closed the study under a trial still to run. Trials to run and none
    running for `IDLE_NOTICE` seconds (no worker started yet, or every worker gone) get one line saying so."""
    bar = study_bar(study, opt, progress)
    idle = IdleWatch()
    try:
        while True:
            while remaining(opt, study) > 0 or others_pending(opt):
                idle.look(study, opt)
                wait_for_others(opt, tracker)
                update_bar(bar, opt)
            time.sleep(REQUEUE_SETTLE)
            if remaining(opt, study) == 0 and not others_pending(opt):
                break
    finally:
        bar.close()


@dataclass
class IdleWatch:
    """How long a `--workers 0` coordinator has had trials to run and no worker running one."""

    since: float | None = None
    said: bool = False

    def look(self, study: ResolvedStudy, opt: optuna.Study) -> None:
        if others_running(opt):
            self.since, self.said = None, False
            return
        now = time.monotonic()
        self.since = now if self.since is None else self.since
        if not self.said and now - self.since >= IDLE_NOTICE:
            self.said = True
            tqdm.write(f"waiting for workers: {remaining(opt, study)} trial(s) to run and none running for "
                       f"{now - self.since:.0f} s; start `{study.command('worker')} "
                       "--storage ... --tracking-uri ...` where the GPUs are (this "
                       "coordinator ends when every trial has)")  # fmt: skip
