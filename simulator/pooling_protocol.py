"""Bodies of the pooling runner's routes: embeddings, pooling, score and rerank (vLLM 0.32)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from simulator.protocol import ChatMessage, OpenAIModel

EncodingFormat = Literal["float", "base64", "bytes", "bytes_only"]
PromptInput = list[int] | list[list[int]] | str | list[str]


class EmbeddingRequest(OpenAIModel):
    """Body of POST /v1/embeddings and /pooling: `input` (text or token ids) or chat `messages`."""

    model: str | None = None
    user: str | None = None
    truncate_prompt_tokens: int | None = Field(default=None, ge=-1)
    input: PromptInput | None = None
    messages: list[ChatMessage] | None = None
    add_special_tokens: bool = True
    encoding_format: EncodingFormat = "float"
    dimensions: int | None = None
    task: str | None = None


ScoreInput = str | list[str]


class ScoreRequest(OpenAIModel):
    """Body of POST /score and /v1/score, in any of its pair spellings."""

    model: str | None = None
    text_1: ScoreInput | None = None
    text_2: ScoreInput | None = None
    data_1: ScoreInput | None = None
    data_2: ScoreInput | None = None
    queries: ScoreInput | None = None
    documents: ScoreInput | None = None
    items: ScoreInput | None = None

    def sides(self) -> tuple[list[str], list[str]]:
        """The left and right texts, whichever names the client used."""
        left = _first(self.text_1, self.data_1, self.queries)
        right = _first(self.text_2, self.data_2, self.documents, self.items)
        return left, right


class RerankRequest(OpenAIModel):
    """Body of POST /rerank, /v1/rerank and /v2/rerank."""

    model: str | None = None
    query: str
    documents: ScoreInput
    top_n: int = Field(default=0, ge=0)

    def document_list(self) -> list[str]:
        """The documents as a list."""
        return [self.documents] if isinstance(self.documents, str) else list(self.documents)


def _first(*values: Any) -> list[str]:
    for value in values:
        if value is not None:
            return [value] if isinstance(value, str) else list(value)
    return []
