"""`openai:<model>`: any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, llama.cpp, vLLM…).

- URL `RAGDOWN_EMBEDDING_URL` or `RAGDOWN_OPENAI_BASE_URL` (default `https://api.openai.com/v1`);
  the request goes to `<url>/embeddings` as `{model, input}`, at most 64 inputs a request, with a
  60 s timeout.
- Key `RAGDOWN_EMBEDDING_API_KEY`, `RAGDOWN_OPENAI_API_KEY`, else `OPENAI_API_KEY`, sent as a bearer
  token when set. It is never logged and is scrubbed from every error message, even when an
  endpoint echoes it back.
- One `httpx.Client` for the embedder's life, so a hook's queries reuse one kept-alive connection.
- The dimension is probed once at load with the input `["probe"]`; the name recorded in meta.json is
  `openai:<model>@<dim>`. Vectors are put back in `index` order and L2-normalised.
- 429 and 5xx answers, and connections refused or dropped, are retried a bounded number of times with
  exponential backoff (honouring a numeric `Retry-After`); any other non-2xx answer fails at once.
- An endpoint has no measured cosine scale, so the hook's `min_score` is a cautious 0.8
  for unmeasured models (it injects only near-matches): measure your model with bench/runbooks.py
  and set `RAGDOWN_HOOK_MIN_SCORE`. Fusion stays plain RRF for the same reason.
"""

from __future__ import annotations

import json
import math
import re
import time
from typing import Any

import httpx
import numpy as np

from ragdown.errors import EmbedderError
from ragdown.indexing.embedders.base import Embedder, EmbedKind, Vectors, normalise_rows
from ragdown.settings import DEFAULT_EMBEDDING_URL as DEFAULT_BASE_URL
from ragdown.settings import embedder_settings

# Read by EmbedderSettings (ragdown/settings.py); named here for the error that asks for a key.
API_KEY_ENVS = ("RAGDOWN_EMBEDDING_API_KEY", "RAGDOWN_OPENAI_API_KEY", "OPENAI_API_KEY")
PREFIX = "openai:"

_MAX_DELAY = 30.0
_BODY_CHARS = 1000
_UNKNOWN_MODEL_RE = re.compile(
    r"model_not_found|(unknown|invalid|unsupported) model|model\b.{0,200}?"
    r"(not found|does not exist|doesn't exist|not exist|unknown|no such|not available|not supported)",
    re.IGNORECASE | re.DOTALL,
)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_item(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("index"), int)
        and not isinstance(value.get("index"), bool)
        and isinstance(value.get("embedding"), list)
        and all(_is_number(n) for n in value["embedding"])
    )


UNMEASURED_MIN_SCORE = 0.8  # docs/hook.md#settings: the default for a model nobody measured


class OpenAIEmbedder(Embedder):
    """Embeddings from an OpenAI-compatible endpoint. No prefixes: the endpoint's model decides."""

    max_chars = 1500
    min_score = UNMEASURED_MIN_SCORE
    unrelated = 0.75

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = 60.0,
        batch_size: int = 64,
        retries: int = 4,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        model = model.strip()
        if not model:
            raise EmbedderError('the embedder "openai:<model>" needs a model name after "openai:"')
        base_url = base_url.strip().rstrip("/")
        try:
            parsed = httpx.URL(base_url)
        except httpx.InvalidURL as error:
            raise EmbedderError(f"RAGDOWN_EMBEDDING_URL is not a URL: {error}") from error
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise EmbedderError(f"RAGDOWN_EMBEDDING_URL must be an http(s) URL, got {base_url!r}")
        self.model = model
        self.base_url = base_url
        # What messages show: the URL without any user:password part.
        self.display_url = str(parsed.copy_with(userinfo=b""))
        self.batch_size = batch_size
        self.retries = retries
        self.backoff = backoff
        self._secret = api_key or ""
        headers = {"Accept": "application/json", "User-Agent": "ragdown"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(max_connections=8, max_keepalive_connections=4, keepalive_expiry=60.0),
            transport=transport,
        )
        self._endpoint = f"{base_url}/embeddings"
        self.dim = 0
        try:
            probe = self._request(["probe"])
        except BaseException:
            self._client.close()
            raise
        self.dim = int(probe.shape[1])
        self.name = f"openai:{model}@{self.dim}"

    @classmethod
    def from_env(cls, model: str, **options: Any) -> OpenAIEmbedder:
        """Configured from the URL and key variables above (first one set wins)."""
        settings = embedder_settings()
        key = settings.embedding_api_key.get_secret_value().strip() if settings.embedding_api_key else ""
        return cls(
            model, base_url=settings.embedding_url.strip() or DEFAULT_BASE_URL, api_key=key or None, **options
        )

    def embed(self, texts: list[str], kind: EmbedKind) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts, axis=0)

    def close(self) -> None:
        self._client.close()

    # --- one request -----------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        if len(self._secret) >= 4:
            text = text.replace(self._secret, "<redacted>")
        return text

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            retry_after = response.headers.get("Retry-After", "").strip()
            try:
                seconds = float(retry_after)
            except ValueError:
                seconds = -1.0
            if math.isfinite(seconds) and seconds >= 0:
                return min(seconds, _MAX_DELAY)
        return float(min(self.backoff * 2**attempt, _MAX_DELAY))

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        """POST with bounded retries on 429, 5xx and failed connections."""
        attempt = 0
        while True:
            try:
                response = self._client.post(self._endpoint, json=payload)
            except httpx.TransportError as error:
                # A refused or dropped connection is worth another try; a request that already
                # waited out the whole timeout is not (that would multiply a minute by the retries).
                stalled = isinstance(error, httpx.TimeoutException) and not isinstance(
                    error, httpx.ConnectTimeout
                )
                if attempt < self.retries and not stalled:
                    time.sleep(self._delay(attempt, None))
                    attempt += 1
                    continue
                tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                raise EmbedderError(
                    f"cannot reach the embedding endpoint {self.display_url} after {tries} "
                    f"({type(error).__name__}: {self._redact(str(error))}); check "
                    f"RAGDOWN_EMBEDDING_URL and that the server is running"
                ) from None
            if (response.status_code == 429 or response.status_code >= 500) and attempt < self.retries:
                response.close()
                time.sleep(self._delay(attempt, response))
                attempt += 1
                continue
            return response

    def _error(self, status: int, body: str, *, with_error: bool = False) -> EmbedderError:
        body = self._redact(body.strip()[:_BODY_CHARS])
        answered = f"answered {status} with an error" if with_error else f"answered {status}"
        message = f"embedding endpoint {self.display_url} {answered}: {body}"
        if _UNKNOWN_MODEL_RE.search(body) or (status == 404 and self.model in body):
            message += (
                f" — the endpoint does not know the model {self.model!r}: check the name after "
                '"openai:" in RAGDOWN_EMBEDDER (for Ollama, pull the model first)'
            )
        elif status == 404:
            message += (
                f" — there is no /embeddings at {self.display_url}/embeddings, or the model "
                f"{self.model!r} is unknown there: check RAGDOWN_EMBEDDING_URL (it ends where /embeddings "
                "begins, such as https://api.openai.com/v1) and the model name"
            )
        elif status in (401, 403):
            message += f" — check the API key ({' or '.join(API_KEY_ENVS)})"
        return EmbedderError(message)

    def _shape_error(self, detail: str = "") -> EmbedderError:
        return EmbedderError(
            f"embedding endpoint {self.display_url} answered 200 without one {{ index, embedding }} per "
            f'input in "data"{detail}. Check that RAGDOWN_EMBEDDING_URL is an OpenAI-compatible '
            "/embeddings API."
        )

    def _request(self, texts: list[str]) -> Vectors:
        response = self._post({"model": self.model, "input": texts})
        try:
            raw = response.text
        finally:
            response.close()
        if not 200 <= response.status_code < 300:
            raise self._error(response.status_code, raw)
        try:
            body: object = json.loads(raw)
        except ValueError:
            raise self._shape_error(" (the body is not JSON)") from None
        data = body.get("data") if isinstance(body, dict) else None
        if isinstance(body, dict) and data is None and body.get("error"):
            raise self._error(response.status_code, json.dumps(body.get("error")), with_error=True)
        if not isinstance(data, list) or len(data) != len(texts) or not all(_is_item(x) for x in data):
            raise self._shape_error()
        items = sorted(data, key=lambda item: int(item["index"]))
        if [item["index"] for item in items] != list(range(len(texts))):
            raise self._shape_error(" (the indexes are not 0..n-1)")
        widths = {len(item["embedding"]) for item in items}
        if len(widths) != 1 or 0 in widths:
            raise self._shape_error(" (the vectors are empty or of different lengths)")
        width = widths.pop()
        if self.dim and width != self.dim:
            raise EmbedderError(
                f"embedding endpoint {self.display_url} returned {width}-dimensional vectors for the "
                f"model {self.model!r}, but it returned {self.dim} when probed at start"
            )
        matrix = np.array([item["embedding"] for item in items], dtype=np.float64)
        if not np.isfinite(matrix).all():
            raise self._shape_error(" (a vector holds a non-finite number)")
        return normalise_rows(matrix)


def load_openai(name: str, **options: Any) -> OpenAIEmbedder:
    """The embedder for `openai:<model>`, configured from the environment."""
    if not name.startswith(PREFIX):
        raise EmbedderError(f'an OpenAI-compatible embedder is named "openai:<model>", got "{name}"')
    return OpenAIEmbedder.from_env(name[len(PREFIX) :], **options)
