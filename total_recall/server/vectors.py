"""Vectors on the server: the server embeds, with the project's local model (the `vec` extra,
vec/embed.py), each pushed context and each recall query, when its database has pgvector
(migrations.ensure_vectors) and a model is configured (TOTAL_RECALL_EMBED_MODEL / _PATH).

Why the server and not the clients: one model for every row of a team (vectors of different models
cannot be compared), clients stay standard-library only, and a client cannot plant a vector that
does not match its text. Rows keep the model's name; recall compares only rows of the server's model.
"""

from __future__ import annotations

from typing import Any

from lib.settings import Settings
from total_recall.server.migrations import VECTOR_DIM
from vec.embed import EmbedError, ModelConfig, clean, embedder, model_config

EMBED_CHARS = 2000  # of title + summary: the model reads 256 tokens at most anyway


def configured_model(settings: Settings) -> ModelConfig | None:
    """The server's model: only when one is named (a server never downloads one unasked), and
    TOTAL_RECALL_VECTORS is not 0."""
    if settings.vectors == "off" or not (settings.embed_model or settings.embed_model_path):
        return None
    return model_config(settings)


def literal(vector: Any) -> str:
    """A pgvector text literal ('[0.1,0.2,…]'), bound as a parameter and cast to vector in SQL."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


class ServerVectors:
    """The loaded model; `document` and `query` answer (model name, vector literal)."""

    def __init__(self, cfg: ModelConfig) -> None:
        self.name = cfg.name
        self._model = embedder(cfg)

    def check(self) -> None:
        """Load the model and refuse one whose dimension the schema cannot store."""
        if self._model.dim != VECTOR_DIM:
            raise EmbedError(
                f"embedding model {self.name} gives {self._model.dim} dimensions; the server stores "
                f"{VECTOR_DIM} (use sentence-transformers/all-MiniLM-L6-v2 or BAAI/bge-small-en-v1.5)"
            )

    def document(self, title: str, summary: str) -> tuple[str, str]:
        text = clean(f"{title}\n{summary}")[:EMBED_CHARS] or title
        return self.name, literal(self._model.embed([text])[0])

    def query(self, q: str) -> tuple[str, str]:
        return self.name, literal(self._model.embed_query(q[:EMBED_CHARS]))
