"""The local model's int8-arithmetic copy (vec/quantize.py): made once, products in int8, same meaning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from test_vec import cfg, current, model_dir, registered, vec_env  # noqa: F401  (fixtures)

from vec import quantize
from vec.embed import embedder
from vec.quantize import int8_model_dir


def _ops(model: Path) -> set[str]:
    return {n.op_type for n in onnx.load(str(model)).graph.node}


def test_the_copy_multiplies_weights_in_int8_and_is_made_once(model_dir: Path, tmp_path: Path) -> None:  # noqa: F811
    assert "MatMulInteger" not in _ops(model_dir / "model.onnx")  # int8 storage, float products
    out = int8_model_dir(model_dir, tmp_path / "cache")
    assert out.parent == tmp_path / "cache" and out != model_dir
    assert {"MatMulInteger", "DynamicQuantizeLinear"} <= _ops(out / "model.onnx")
    for f in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        assert (out / f).read_bytes() == (model_dir / f).read_bytes()
    made = (out / "model.onnx").stat().st_mtime_ns
    quantize._MADE.clear()  # a new process finds the copy on disk
    assert int8_model_dir(model_dir, tmp_path / "cache") == out
    assert (out / "model.onnx").stat().st_mtime_ns == made
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [out.name]  # no work dir left behind


@pytest.mark.usefixtures("vec_env")
def test_the_embedder_runs_the_copy_and_keeps_the_meaning(model_dir: Path) -> None:  # noqa: F811
    from fastembed import TextEmbedding

    texts = [
        "The deploy failed because the database migration timed out.",
        "We switched the cache from Redis to an in-process LRU to cut latency.",
        "Tests pass now; the flaky one waited on a port that was already taken.",
    ]
    emb = embedder(cfg())
    got = emb.embed(texts)
    assert emb._local is not None and Path(emb._local).name.startswith("int8-")
    float_model = TextEmbedding(model_name=cfg().name, specific_model_path=str(model_dir), threads=1)
    want = np.asarray(list(float_model.embed(texts)), dtype=np.float32)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert float(np.min(np.sum(got * want, axis=1))) > 0.97  # the same vectors, up to int8 rounding
    assert float(got[0] @ got[1]) < 0.9  # and still distinct texts
    query = emb.embed_query("why did the database migration fail")
    assert int(np.argmax(got @ query)) == 0
