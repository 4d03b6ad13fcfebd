"""Embeddings (V2): which text is worth a vector, how it is chunked, and the fastembed wrapper.

The model is `BAAI/bge-small-en-v1.5` by default (fastembed downloads it once into the data dir).
Offline, `TOTAL_RECALL_EMBED_MODEL_PATH` names a local model directory (model.onnx + tokenizer
files); its model name comes from `TOTAL_RECALL_EMBED_MODEL`, default
`sentence-transformers/all-MiniLM-L6-v2`; it runs as an int8-arithmetic copy (vec/quantize.py).
fastembed and numpy are imported only when embedding.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lib.settings import Settings
from vec.quantize import int8_model_dir

DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
LOCAL_DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
METRIC = "cosine"

# Message kinds worth recalling by meaning: what people typed and what the assistant said, plus
# session digests. Tool calls and their output are left to full-text search.
MESSAGE_KINDS = ("prompt", "text", "away_summary", "compact_summary")
CHUNK_CHARS = 500
MAX_CHUNKS = 3  # per message: its first two and its closing chunk (docs/benchmarks.md, Vectors)
MIN_CHARS = 12
# One model call embeds up to GROUP texts of the same token count: no padding (a padded batch costs every
# text the longest one's tokens), and the call's fixed cost is shared; 1.2x the texts per CPU-second of
# one text per call (docs/benchmarks.md, Vectors). The vectors are the same either way.
GROUP = 16
# The int8-arithmetic copy of a local model (vec/quantize.py) quantizes its activations with one scale per
# call: texts embedded together would move each other's vectors (cosine 0.99), so it embeds one text per
# call, which costs it no more (its per-call cost is small next to the float model's).
INT8_GROUP = 1
# Backfill runs this many single-threaded model sessions side by side (one per core, at most 2): on
# 2 cores that embeds ~1.7x more texts per CPU-second than one session with 2 intra-op threads,
# which spends its second thread mostly waiting (docs/benchmarks.md, Vectors).
WORKERS = max(1, min(2, os.cpu_count() or 1))


@dataclass(frozen=True, slots=True)
class ModelConfig:
    name: str
    path: str | None  # local model directory (offline), or None to use fastembed's cache
    cache_dir: str  # the data dir's models/: fastembed's downloads and the int8 copy of a local model

    @property
    def label(self) -> str:
        return f"{self.name} ({self.path})" if self.path else self.name


def model_config(settings: Settings) -> ModelConfig:
    path = settings.embed_model_path
    name = settings.embed_model or (LOCAL_DEFAULT_MODEL if path else DEFAULT_MODEL)
    return ModelConfig(name, path, str(settings.data_dir() / "models"))


# --- text -> chunks -------------------------------------------------------------------------------

_NOISE_BLOCKS = re.compile(
    r"<(system-reminder|ide_opened_file|ide_selection|task-id|output-file|status|local-command-stdout)>"
    r".*?</\1>",
    re.S,
)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
_SPACES = re.compile(r"[ \t\f\v]+")
# A sentence ends at . ! ? (or a CJK stop) followed by space, or at a line break.
# (A line break is matched from the first space of its run only: from every space it is quadratic.)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|(?<![^\S\n])[^\S\n]*\n\s*")


def clean(text: str) -> str:
    """Drop harness noise (reminders, IDE notices, tags); keep the words a person would recall."""
    text = _NOISE_BLOCKS.sub(" ", text)
    text = _TAG.sub(" ", text)
    text = _SPACES.sub(" ", text)
    return re.sub(r"\n\s*\n+", "\n", text).strip()


def sentences(text: str) -> list[str]:
    return [s for s in (p.strip() for p in _SENTENCE.split(text)) if s]


def _split_long(sentence: str, size: int) -> list[str]:
    """A sentence longer than a chunk is cut at word boundaries (hard cut only inside one huge word)."""
    out: list[str] = []
    cur = ""
    for word in sentence.split(" "):
        while len(word) > size:
            if cur:
                out.append(cur)
                cur = ""
            out.append(word[:size])
            word = word[size:]
        if cur and len(cur) + 1 + len(word) > size:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}" if cur else word
    if cur:
        out.append(cur)
    return out


def _pieces(text: str, size: int) -> list[str]:
    """Whole sentences, a sentence longer than a chunk cut at word boundaries."""
    return [p for sent in sentences(text) for p in (_split_long(sent, size) if len(sent) > size else [sent])]


def _closing(pieces: list[str], size: int) -> str:
    """The last whole pieces that fit in one chunk: how the message ends (its conclusion, the answer)."""
    cur = pieces[-1]
    for piece in reversed(pieces[:-1]):
        if len(cur) + 1 + len(piece) > size:
            break
        cur = f"{piece} {cur}"
    return cur


def chunk_text(text: str, size: int = CHUNK_CHARS, max_chunks: int = MAX_CHUNKS) -> list[str]:
    """Whole sentences packed greedily into chunks of about `size` characters. A message longer than
    `max_chunks` chunks keeps its first `max_chunks - 1` and its closing chunk (embedding cost grows with
    the text embedded; the middle of a long message is left to full-text search)."""
    text = clean(text)
    if len(text) < MIN_CHARS:
        return []
    if len(text) <= size:
        return [text]
    chunks: list[str] = []
    cur = ""
    pieces = _pieces(text, size)
    for i, piece in enumerate(pieces):
        if cur and len(cur) + 1 + len(piece) > size:
            chunks.append(cur)
            if len(chunks) >= max_chunks - 1:
                return [*chunks, _closing(pieces[i:], size)] if max_chunks > 1 else chunks
            cur = piece
        else:
            cur = f"{cur} {piece}" if cur else piece
    if cur:
        # A short tail reads better joined to the chunk before it than alone.
        if chunks and len(cur) < size // 5 and len(chunks[-1]) + len(cur) < size * 1.2:
            chunks[-1] = f"{chunks[-1]} {cur}"
        else:
            chunks.append(cur)
    return chunks


# --- the model -----------------------------------------------------------------------------------


class EmbedError(Exception):
    """The model cannot be loaded or run; the message says how to fix it."""


class Embedder:
    """A loaded fastembed model; vectors come back L2-normalised float32 (numpy arrays)."""

    def __init__(self, cfg: ModelConfig) -> None:
        self.cfg = cfg
        self._models: dict[int, Any] = {}
        self._dim = 0
        self._local: str | None = None  # the model directory a local model runs from
        self._counter: Any = None  # a tokenizer without padding, to group texts by token count
        self._lock = threading.Lock()

    def _load(self, slot: int = 0) -> Any:
        """One single-threaded model session per slot: a query uses slot 0 (no thread spin-up cost),
        a batch one slot per worker."""
        threads = 1
        if slot not in self._models:
            from fastembed import TextEmbedding

            try:
                if self.cfg.path:
                    if not Path(self.cfg.path, "model.onnx").is_file():
                        raise EmbedError(f"no model.onnx in TOTAL_RECALL_EMBED_MODEL_PATH={self.cfg.path}")
                    model = TextEmbedding(
                        model_name=self.cfg.name, specific_model_path=self._local_model(), threads=threads
                    )
                else:
                    if model_on_disk(self.cfg) is False and not reachable():
                        raise EmbedError(offline_message(self.cfg))
                    model = TextEmbedding(
                        model_name=self.cfg.name, cache_dir=self.cfg.cache_dir, threads=threads
                    )
            except EmbedError:
                raise
            except Exception as exc:  # fastembed raises plain ValueError/OSError/hub errors
                raise EmbedError(
                    f"cannot load embedding model {self.cfg.label}: {exc}; offline, point "
                    "TOTAL_RECALL_EMBED_MODEL_PATH at a local model directory"
                ) from exc
            self._models[slot] = model
        return self._models[slot]

    def _local_model(self) -> str:
        """The local model directory to run: its int8-arithmetic copy (vec/quantize.py), made once."""
        if self._local is None:
            self._local = str(int8_model_dir(Path(str(self.cfg.path)), Path(self.cfg.cache_dir)))
        return self._local

    @property
    def dim(self) -> int:
        if not self._dim:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _groups(self, texts: list[str]) -> list[list[int]]:
        """Positions of `texts` in groups of at most GROUP texts of one token count, shortest first."""
        if self._counter is None:
            from tokenizers import Tokenizer

            tok = self._models[0].model.tokenizer  # fastembed's, truncation as the model runs it
            self._counter = Tokenizer.from_str(tok.to_str())
            self._counter.no_padding()
        by: dict[int, list[int]] = {}
        for i, enc in enumerate(self._counter.encode_batch(texts)):
            by.setdefault(len(enc.ids), []).append(i)
        size = INT8_GROUP if self._local else GROUP
        return [ids[j : j + size] for n in sorted(by) for ids in (by[n],) for j in range(0, len(ids), size)]

    def embed(self, texts: list[str]) -> Any:
        """Document vectors, shape (len(texts), dim): groups of texts of one token count shared out to
        WORKERS single-threaded sessions (onnxruntime releases the GIL while it runs)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self._dim or 1), dtype=np.float32)
        done: list[list[tuple[list[int], list[Any]]]] = []
        errors: list[BaseException] = []

        def work(slot: int, groups: list[list[int]]) -> None:
            try:
                model = self._models[slot]
                for g in groups:
                    done[slot].append((g, list(model.embed([texts[i] for i in g], batch_size=len(g)))))
            except BaseException as exc:  # re-raised in the caller's thread below
                errors.append(exc)

        with self._lock:
            self._load(0)
            groups = self._groups(texts)
            workers = min(WORKERS, len(groups))
            done = [[] for _ in range(workers)]
            for slot in range(1, workers):
                self._load(slot)
            threads = [
                threading.Thread(target=work, args=(slot, groups[slot::workers]))
                for slot in range(1, workers)
            ]
            for t in threads:
                t.start()
            work(0, groups[0::workers])
            for t in threads:
                t.join()
        if errors:
            raise errors[0]
        out: Any = None
        for part in done:
            for g, vecs in part:
                if out is None:
                    out = np.empty((len(texts), len(vecs[0])), dtype=np.float32)
                out[g] = np.asarray(vecs, dtype=np.float32)
        return _normalise(out)

    def embed_query(self, text: str) -> Any:
        with self._lock:
            model = self._load()
            vec = next(iter(model.query_embed(text)))
        import numpy as np

        return _normalise(np.asarray(vec, dtype=np.float32)[None, :])[0]


def _normalise(a: Any) -> Any:
    import numpy as np

    norms = np.linalg.norm(a, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (a / norms).astype(np.float32)


def model_on_disk(cfg: ModelConfig) -> bool | None:
    """Is the model's ONNX file on disk? None when it cannot be told (a model fastembed does not list)."""
    if cfg.path:
        return Path(cfg.path, "model.onnx").is_file()
    from fastembed import TextEmbedding

    name = cfg.name.lower()
    desc = next((m for m in TextEmbedding.list_supported_models() if m["model"].lower() == name), None)
    if desc is None:
        return None
    sources, cache = desc.get("sources") or {}, Path(cfg.cache_dir)
    dirs = [f"models--{sources['hf'].replace('/', '--')}/snapshots/*"] if sources.get("hf") else []
    dirs += [f"{Path(sources['url']).name.split('.tar')[0]}*"] if sources.get("url") else []
    return any(any(cache.glob(f"{d}/{desc['model_file']}")) for d in dirs)


def reachable(host: str = "huggingface.co", timeout: float = 0.7) -> bool:
    """Can the model hub be reached? Answered within `timeout` (a name lookup offline may hang: it
    runs in a thread that is left to finish on its own)."""
    import socket

    ok: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((host, 443), timeout=timeout).close()
            ok.append(True)
        except OSError:
            pass

    t = threading.Thread(target=probe, daemon=True)
    t.start()
    t.join(timeout)
    return bool(ok)


def offline_message(cfg: ModelConfig) -> str:
    return (
        f"embedding model {cfg.name} is not downloaded, and the model hub cannot be reached: run once "
        "online (`total-recall vec backfill`), or point TOTAL_RECALL_EMBED_MODEL_PATH at a local model "
        "directory (with model.onnx)"
    )


_EMBEDDERS: dict[ModelConfig, Embedder] = {}


def embedder(cfg: ModelConfig) -> Embedder:
    """The process-wide embedder for a model config (loaded on first use, then kept)."""
    if cfg not in _EMBEDDERS:
        _EMBEDDERS[cfg] = Embedder(cfg)
    return _EMBEDDERS[cfg]
