"""The CUDA path on a real GPU: precision choice, padding-free forward under autocast, encoding, and a
training stage in fp32, bf16 and fp16 (with its GradScaler). Skipped where no GPU is present (CI)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from harness.device import DTYPES, autocast, hardware_tags, resolve_precision
from harness.encoders.encoder import Encoder
from harness.evaluate.encode import encode
from harness.methods.pipeline import PipelineData
from harness.resolve.run_spec import resolve_run
from harness.stages.contrastive.unsup import wiki_sentences
from harness.train.loop import train

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
CUDA = torch.device("cuda")
SENTENCES = [
    "a",
    "the cat sat on the mat .",
    "short one",
    "a much longer sentence with many more words in it",
]


def test_auto_precision_and_tags_name_this_gpu() -> None:
    native_bf16 = torch.cuda.get_device_capability()[0] >= 8
    assert resolve_precision(CUDA, "auto") == ("bf16" if native_bf16 else "fp16")
    tags = hardware_tags(CUDA)
    assert tags["gpu"] == torch.cuda.get_device_name(0) and tags["device"] == "cuda"


@pytest.mark.parametrize(("precision", "tolerance"), [("fp32", 1e-4), ("bf16", 5e-2), ("fp16", 1e-2)])
def test_packed_forward_on_cuda_equals_the_padded_cpu_forward(
    two_layer_bert: Path, precision: str, tolerance: float
) -> None:
    gpu, cpu = (
        Encoder(str(two_layer_bert), "mean", 32).to(CUDA).eval(),
        Encoder(str(two_layer_bert), "mean", 32).eval(),
    )
    cpu.packing = False
    assert gpu.packing
    with torch.inference_mode(), autocast(CUDA, DTYPES[precision]):
        ours = gpu(gpu.tokenize(SENTENCES)).float().cpu()
    with torch.inference_mode():
        theirs = cpu(cpu.tokenize(SENTENCES))
    torch.testing.assert_close(ours, theirs, atol=tolerance, rtol=tolerance)


def test_encode_on_cuda_equals_cpu(two_layer_bert: Path) -> None:
    gpu, cpu = Encoder(str(two_layer_bert), "mean", 32).to(CUDA), Encoder(str(two_layer_bert), "mean", 32)
    ours, theirs = encode(gpu, SENTENCES * 3, batch_size=3), encode(cpu, SENTENCES * 3, batch_size=3)
    assert ours.keys() == theirs.keys()
    for sentence in theirs:
        np.testing.assert_allclose(ours[sentence], theirs[sentence], atol=1e-4)


def train_simcse_on_cuda(
    tiny_bert: Path, data_dir: Path, precision: str, steps: int, compiled: bool = False
) -> tuple[Encoder, torch.nn.Module, dict[str, torch.Tensor], list[dict[str, float]], object]:
    """An unsupervised SimCSE stage of `steps` steps on 256 wiki sentences on the GPU (the encoder's
    training forward compiled by `compile: auto` when `compiled`): (encoder, method, its state before,
    the logged metrics, the loop's outcome)."""
    from harness.encoders.compiled import compile_choice

    run = resolve_run(
        {"method": "unsup_simcse", "model": str(tiny_bert), "batch_size": 16, "max_seq_length": 32,
         "max_steps": steps, "log_every": 2, "eval_every": steps // 2, "precision": precision, "lr": 1e-3}
    )  # fmt: skip
    torch.manual_seed(0)
    encoder = Encoder(str(tiny_bert), "mean", 32)
    method = run.build(encoder)
    if compiled:
        assert compile_choice(encoder, "auto", CUDA) == "on (auto: cuda), reduce-overhead"
    before = {k: v.detach().clone() for k, v in method.state_dict().items()}
    logged: list[dict[str, float]] = []
    sentences = PipelineData(None, [list(wiki_sentences(data_dir))[:256]])
    outcome = train(
        method, method.stages(run.settings, sentences), run.settings, CUDA,
        DTYPES[precision], dev_score=lambda: 0.0, on_metrics=lambda step, m: logged.append(m),
        on_dev=lambda step, score: None, progress=False,
    )  # fmt: skip
    return encoder, method, before, logged, outcome


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
def test_a_contrastive_stage_trains_on_cuda(tiny_bert: Path, data_dir: Path, precision: str) -> None:
    _, method, before, logged, outcome = train_simcse_on_cuda(tiny_bert, data_dir, precision, 6)
    assert outcome.steps == 6 and len(logged) == 3
    assert all(np.isfinite(m["train.loss"]) for m in logged)
    assert all(p.device.type == "cuda" and p.dtype == torch.float32 for p in method.parameters())
    changed = [k for k, v in method.state_dict().items() if not torch.equal(v.cpu(), before[k].cpu())]
    assert any("encoder" in k and "layer.0" in k for k in changed)


def test_forked_local_workers_train_on_the_gpu(tmp_path: Path, tiny_bert: Path) -> None:
    """`run-study --workers 2` forks its workers from a server that imported torch (harness.fleet.forked): the
    server must not have touched CUDA, so each worker opens its own context on the GPU it was given."""
    from tests.helpers import child_runs, harness_here, tiny_study

    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5]}, name="gpu_workers", final_tasks=["quick"])
    done = harness_here("run-study", study, "--workers", "2", "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    runs = child_runs("gpu_workers")
    assert len(runs) == 2 and all(r.data.tags["device"].startswith("cuda") for r in runs)
    assert len({r.data.tags["worker"] for r in runs}) == 2


def test_senteval_pytorch_probe_runs_on_the_gpu_as_on_the_cpu() -> None:
    """SentEval's PyTorch classifier where the encoder runs (SentEval's code puts it on CUDA): the same
    initial weights and shuffles, so the CUDA fit ends within float rounding of the CPU fit."""
    from harness.evaluate.torch_probe import CONFIGS, TorchLogisticRegression

    rng = np.random.RandomState(0)
    x = rng.randn(400, 32).astype(np.float32)
    y = (x[:, :4].sum(axis=1) + 0.5 * rng.randn(400) > 0).astype(np.int64)
    fits = {
        device: TorchLogisticRegression(32, 2, 1e-4, CONFIGS["pytorch"], device).fit(x[:300], y[:300])
        for device in ("cpu", "cuda")
    }
    assert fits["cuda"].model.weight.device.type == "cuda"
    torch.testing.assert_close(
        fits["cuda"].model.weight.cpu(), fits["cpu"].model.weight, atol=1e-3, rtol=1e-3
    )
    assert abs(fits["cuda"].score(x[300:], y[300:]) - fits["cpu"].score(x[300:], y[300:])) <= 0.02


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_the_packed_forward_of_a_token_batch_does_not_sync_with_the_gpu(
    two_layer_bert: Path, mode: str
) -> None:
    """With the real tokens' positions found on the CPU (TokenBatch), a forward pass only queues kernels:
    CUDA's sync debug mode raises on any read-back (`.item()`, `bool()`, `nonzero()`, blocking copies)."""
    encoder = Encoder(str(two_layer_bert), "mean", 32).to(CUDA)
    encoder.train(mode == "train")
    batch = encoder.tokenize(SENTENCES)
    assert batch.index is not None  # padded: the gather path
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        embeddings = encoder(batch)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert embeddings.shape == (len(SENTENCES), encoder.hidden_size)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_a_compiled_contrastive_stage_trains_on_cuda_with_cuda_graphs(
    tiny_bert: Path, data_dir: Path, precision: str
) -> None:
    """`compile: auto` on a GPU (harness.encoders.compiled): the training forward compiled with CUDA graphs
    (mode reduce-overhead), batches padded to length buckets, dropout on; the stage trains to finite
    losses and changes the encoder, and evaluation stays eager."""
    encoder, method, before, logged, outcome = train_simcse_on_cuda(tiny_bert, data_dir, precision, 8, True)
    assert outcome.steps == 8 and all(np.isfinite(m["train.loss"]) for m in logged)
    changed = [k for k, v in method.state_dict().items() if not torch.equal(v.cpu(), before[k].cpu())]
    assert any("encoder" in k and "layer.0" in k for k in changed)
    encoder.train()
    assert encoder.tokenize(SENTENCES)["input_ids"].shape[1] in encoder.buckets
    encoder.eval()
    embeddings = encode(encoder, SENTENCES, batch_size=2)  # eager, padding-free
    assert all(np.isfinite(v).all() for v in embeddings.values())


def test_the_batched_probe_on_cuda_chooses_as_on_the_cpu() -> None:
    """SentEval's PyTorch classifier, every fit of a call together, on the GPU (where a trial fits it) and
    on the CPU: cuBLAS and MKL sum in other orders, so not the same bits, but the same best L2 and
    accuracies within a few items."""
    from harness.evaluate.batched_probe import fit_together
    from harness.evaluate.probe_fits import ProbeFit
    from harness.evaluate.torch_probe import CONFIGS

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 900)
    x = (rng.normal(size=(900, 64)) + 0.5 * rng.normal(size=(3, 64))[y]).astype(np.float32)
    fits = [ProbeFit(np.arange(600), reg, np.arange(600, 750)) for reg in (1e-5, 1e-4, 1e-3, 1e-2)]
    fits += [ProbeFit(np.arange(i, 600, 2), 1e-4, np.arange(600, 750)) for i in range(2)]
    on = {device: fit_together(x, y, fits, 3, CONFIGS["pytorch"], device) for device in ("cpu", "cuda")}
    cpu, gpu = on["cpu"].validation_accuracy, on["cuda"].validation_accuracy
    assert int(np.argmax(cpu[:4])) == int(np.argmax(gpu[:4]))
    assert max(abs(a - b) for a, b in zip(cpu, gpu, strict=True)) <= 3 / 150
    test = [np.arange(750, 900)] * len(fits)
    ours, theirs = (on[device].predict(range(len(fits)), test) for device in ("cpu", "cuda"))
    agree = [np.mean(a == b) for a, b in zip(ours, theirs, strict=True)]
    assert min(agree) >= 0.95
