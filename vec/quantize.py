"""The local model with int8 arithmetic: its matrix products computed on 8-bit integers.

The int8 ONNX export of all-MiniLM-L6-v2 stores its weights in 8 bits but multiplies in float32
(onnxruntime folds the weights back to floats when it loads them). Dynamic quantization (per output
channel, weight matrices only: the attention's products of activations stay float) makes the
products themselves 8-bit: 1.9x fewer CPU-seconds per text, vectors at cosine 0.99 of the float ones
on the benchmark's texts, the same dev-set retrieval (docs/benchmarks.md, Vectors).

The converted model is written once into the data dir (keyed by the source file's hash and the
onnxruntime version), beside copies of the model directory's tokenizer and config files.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
from pathlib import Path


def _key(model: Path) -> str:
    import onnxruntime as ort

    h = hashlib.blake2b(digest_size=10)
    with model.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    h.update(ort.__version__.encode())
    return h.hexdigest()


def _convert(src: Path, dst: Path) -> None:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    floats = dst.parent / "float.onnx"
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # fold the weights to floats
    so.optimized_model_filepath = str(floats)
    ort.InferenceSession(str(src), sess_options=so, providers=["CPUExecutionProvider"])
    logging.disable(logging.WARNING)  # the quantizer advises pre-processing on the root logger
    try:
        quantize_dynamic(
            str(floats),
            str(dst),
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"MatMulConstBOnly": True},
        )
    finally:
        logging.disable(logging.NOTSET)
    floats.unlink()


_MADE: dict[Path, Path] = {}  # model directory -> its int8 copy, in this process


def int8_model_dir(model_dir: Path, cache: Path) -> Path:
    """A model directory like `model_dir` whose model.onnx multiplies in int8 (made on first use, in
    `cache`; a process converts a model once whatever cache later callers name)."""
    if model_dir in _MADE and (_MADE[model_dir] / "model.onnx").is_file():
        return _MADE[model_dir]
    out = _MADE[model_dir] = cache / f"int8-{_key(model_dir / 'model.onnx')}"
    if (out / "model.onnx").is_file():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".int8-", dir=cache))
    try:
        for f in model_dir.iterdir():
            if f.is_file() and f.suffix != ".onnx":
                shutil.copyfile(f, work / f.name)
        _convert(model_dir / "model.onnx", work / "model.onnx")
        try:
            work.rename(out)
        except OSError:  # another process made it first
            if not (out / "model.onnx").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out
