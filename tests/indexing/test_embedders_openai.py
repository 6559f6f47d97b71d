"""`openai:<model>` against a fake OpenAI-compatible `/embeddings` endpoint on 127.0.0.1.

The server counts TCP connections (one request handler per connection), records every request,
and answers with whatever the test's responder returns.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from ragdown.errors import EmbedderError
from ragdown.indexing.embedders import create_embedder
from ragdown.indexing.embedders.openai_compat import OpenAIEmbedder

KEY = "sk-test-0123456789abcdef"
Answer = tuple[int, Any, dict[str, str]]
Responder = Callable[[dict[str, Any]], Answer]


def items(inputs: list[str], vector: Callable[[int], list[float]]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": vector(i)} for i in range(len(inputs))],
        "model": "test",
    }


def three_four(body: dict[str, Any]) -> Answer:
    """Every input embeds as a multiple of [3, 4]."""
    return 200, items(body["input"], lambda i: [3.0 * (i + 1), 4.0 * (i + 1)]), {}


class Endpoint:
    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[dict[str, Any]] = []
        self.responder: Responder = three_four
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as a real endpoint

            def setup(self) -> None:
                endpoint.connections += 1
                super().setup()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                endpoint.requests.append(
                    {"path": self.path, "headers": dict(self.headers.items()), "body": body}
                )
                status, answer, headers = endpoint.responder(body)
                data = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def inputs(self) -> list[list[str]]:
        return [r["body"]["input"] for r in self.requests]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.close()


def connect(endpoint: Endpoint, model: str = "test", **options: Any) -> OpenAIEmbedder:
    options.setdefault("backoff", 0.01)
    return OpenAIEmbedder(model, base_url=endpoint.url, api_key=KEY, **options)


def test_probe_learns_the_dimension_and_names_the_index(endpoint: Endpoint) -> None:
    embedder = connect(endpoint)
    assert embedder.dim == 2
    assert embedder.name == "openai:test@2"
    assert endpoint.requests[0]["path"] == "/v1/embeddings"
    assert endpoint.requests[0]["body"] == {"model": "test", "input": ["probe"]}
    assert endpoint.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    embedder.close()


def test_the_key_comes_from_the_environment(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_EMBEDDING_URL", endpoint.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fallback-key")
    monkeypatch.setenv("RAGDOWN_EMBEDDING_API_KEY", "sk-ragdown-key")
    OpenAIEmbedder.from_env("test").close()
    monkeypatch.delenv("RAGDOWN_EMBEDDING_API_KEY")
    OpenAIEmbedder.from_env("test").close()
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIEmbedder.from_env("test").close()
    sent = [r["headers"].get("Authorization") for r in endpoint.requests]
    assert sent == ["Bearer sk-ragdown-key", "Bearer sk-fallback-key", None]


def test_rows_are_normalised_and_put_in_index_order(endpoint: Endpoint) -> None:
    embedder = connect(endpoint)
    np.testing.assert_allclose(embedder.embed(["a"], "document"), [[0.6, 0.8]], rtol=1e-6)

    def reversed_rows(body: dict[str, Any]) -> Answer:
        data = items(body["input"], lambda i: [float(i + 1), 0.0] if i % 2 else [0.0, float(i + 1)])
        data["data"].reverse()
        return 200, data, {}

    endpoint.responder = reversed_rows
    vectors = embedder.embed(["a", "b", "c"], "query")
    np.testing.assert_allclose(vectors, [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    assert vectors.dtype == np.float32
    assert embedder.embed([], "document").shape == (0, 2)
    embedder.close()


@pytest.mark.slow  # waits 4.5 s of real time
def test_batches_of_64_reuse_one_connection_after_a_pause(endpoint: Endpoint) -> None:
    embedder = connect(endpoint)
    texts = [f"text {i}" for i in range(130)]
    vectors = embedder.embed(texts, "document")
    assert vectors.shape == (130, 2)
    time.sleep(4.5)
    embedder.embed_query("after a pause")
    assert [len(batch) for batch in endpoint.inputs()] == [1, 64, 64, 2, 1]
    assert [t for batch in endpoint.inputs()[1:4] for t in batch] == texts
    assert endpoint.connections == 1
    embedder.close()


@pytest.mark.parametrize(
    "answer",
    [
        {"data": [{"embedding": [1.0, 2.0]}]},  # no index
        {"data": [{"index": 0, "embedding": ["1", "2"]}]},  # not numbers
        {"data": []},  # too few
        {"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},  # too many
        {"data": [{"index": 3, "embedding": [1.0, 2.0]}]},  # index out of range
        {"embeddings": [[1.0, 2.0]]},  # not the OpenAI shape
        [[1.0, 2.0]],
        b"<html>not json</html>",
    ],
)
def test_a_response_of_the_wrong_shape_is_refused(endpoint: Endpoint, answer: Any) -> None:
    endpoint.responder = lambda body: (200, answer, {})
    with pytest.raises(EmbedderError) as caught:
        connect(endpoint)
    assert "without one { index, embedding } per input" in str(caught.value)
    assert endpoint.url in str(caught.value)


def test_a_dimension_that_changes_after_the_probe_is_refused(endpoint: Endpoint) -> None:
    embedder = connect(endpoint)
    endpoint.responder = lambda body: (200, items(body["input"], lambda i: [1.0, 2.0, 3.0]), {})
    with pytest.raises(EmbedderError, match=r"returned 3-dimensional vectors .* returned 2 when probed"):
        embedder.embed(["a"], "document")
    embedder.close()


def test_an_unknown_model_says_so(endpoint: Endpoint) -> None:
    openai_404 = {
        "error": {
            "message": "The model `nope` does not exist or you do not have access to it.",
            "type": "invalid_request_error",
            "code": "model_not_found",
        }
    }
    endpoint.responder = lambda body: (404, openai_404, {})
    with pytest.raises(EmbedderError) as caught:
        connect(endpoint, "nope")
    message = str(caught.value)
    assert message.startswith(f"embedding endpoint {endpoint.url} answered 404: ")
    assert "does not exist" in message
    assert "does not know the model 'nope'" in message
    assert len(endpoint.requests) == 1  # not retried


def test_an_unknown_model_in_an_error_body_says_so(endpoint: Endpoint) -> None:
    ollama = {"error": 'model "nope" not found, try pulling it first'}
    endpoint.responder = lambda body: (400, ollama, {})
    with pytest.raises(EmbedderError, match=r"answered 400: .*does not know the model 'nope'"):
        connect(endpoint, "nope")
    endpoint.responder = lambda body: (200, ollama, {})
    with pytest.raises(EmbedderError, match=r"answered 200 with an error: .*does not know the model 'nope'"):
        connect(endpoint, "nope")


def test_a_404_without_a_model_points_at_the_base_url(endpoint: Endpoint) -> None:
    endpoint.responder = lambda body: (404, b"404 page not found", {})
    with pytest.raises(EmbedderError, match=r"answered 404: 404 page not found .*RAGDOWN_EMBEDDING_URL"):
        connect(endpoint)


def test_429_is_retried_with_backoff(endpoint: Endpoint) -> None:
    answers = iter([(429, {"error": "slow down"}, {"Retry-After": "0"})] * 2)
    endpoint.responder = lambda body: next(answers, None) or three_four(body)
    embedder = connect(endpoint)
    assert embedder.dim == 2
    assert len(endpoint.requests) == 3
    embedder.close()


def test_retries_are_bounded(endpoint: Endpoint) -> None:
    endpoint.responder = lambda body: (503, {"error": "overloaded"}, {})
    with pytest.raises(EmbedderError, match="answered 503"):
        connect(endpoint, retries=2)
    assert len(endpoint.requests) == 3


def test_other_errors_are_not_retried_and_never_show_the_key(endpoint: Endpoint) -> None:
    endpoint.responder = lambda body: (401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}, {})
    with pytest.raises(EmbedderError) as caught:
        connect(endpoint)
    message = str(caught.value)
    assert "answered 401" in message
    assert KEY not in message
    assert "<redacted>" in message
    assert "RAGDOWN_OPENAI_API_KEY" in message
    assert len(endpoint.requests) == 1


def test_an_unreachable_endpoint_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(EmbedderError) as caught:
        OpenAIEmbedder("test", base_url=url, api_key=KEY, retries=1, backoff=0.01)
    message = str(caught.value)
    assert f"cannot reach the embedding endpoint {url} after 2 attempts" in message
    assert KEY not in message


def test_the_registry_builds_openai_embedders(endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGDOWN_OPENAI_BASE_URL", endpoint.url)
    monkeypatch.setenv("RAGDOWN_OPENAI_API_KEY", KEY)
    embedder = create_embedder("openai:text-embedding-3-small")
    assert embedder.name == "openai:text-embedding-3-small@2"
    assert endpoint.requests[0]["body"]["model"] == "text-embedding-3-small"
    embedder.close()
    with pytest.raises(EmbedderError, match='got "openai:"'):
        create_embedder("openai:")


def test_an_unmeasured_endpoint_gets_the_cautious_hook_floor_and_plain_rrf() -> None:
    from ragdown.indexing.embedders.openai_compat import OpenAIEmbedder

    assert OpenAIEmbedder.min_score == 0.8
    assert OpenAIEmbedder.min_score > OpenAIEmbedder.unrelated
    assert OpenAIEmbedder.score_evidence == 0.0
    assert OpenAIEmbedder.min_ratio == 0.95
