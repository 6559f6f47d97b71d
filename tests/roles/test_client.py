"""How a reader reaches its primary (`ragdown.roles.client`), against a real tiny primary on loopback or
a unix socket that each test starts: the reachability flag, writes refused at once while the primary
is known to be away, and the hook's session memory failing open — a stopped primary, one slower than
the one-second budget and one that answers 401 all leave the hook answering without it."""

from __future__ import annotations

import ipaddress
import json
import socketserver
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragdown.errors import PrimaryUnreachableError, RagdownError
from ragdown.roles.client import PrimaryClient, RemoteSessionMemory

TOKEN = "internal-test-token"
UNREACHABLE = "cannot be reached, so nothing was written; retry in a moment"


@dataclass
class Request:
    method: str
    path: str
    authorization: str | None
    body: Any


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class Primary:
    """The primary's internal API as far as a reader uses it: `/internal/ping`, `/internal/memory` (a
    session memory of its own), and `/internal/tool`. `status` answers everything
    with that status instead; `hold` makes the paths it names wait until `release()`."""

    def __init__(self, unix_socket: Path | None = None) -> None:
        self.requests: list[Request] = []
        self.memory: dict[str, set[str]] = {}
        self.status = 200
        self.hold: set[str] = set()
        self.released = threading.Event()
        self.answered_held = threading.Event()
        self.unix_socket = unix_socket
        self.port = 0
        self.server: socketserver.BaseServer | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"unix://{self.unix_socket}" if self.unix_socket else f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        primary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.answer(None)

            def do_POST(self) -> None:
                self.answer(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))

            def answer(self, body: Any) -> None:
                primary.requests.append(
                    Request(self.command, self.path, self.headers.get("Authorization"), body)
                )
                # Decided once, on arrival: a request answered before the test set `hold` may still be
                # finishing here when it does, and must not count as a held one.
                held = self.path in primary.hold
                if held:
                    primary.released.wait(timeout=60)
                status, data = primary.respond(self.path, body)
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                if held:
                    primary.answered_held.set()

            def log_message(self, format: str, *args: object) -> None:
                pass

        server: socketserver.BaseServer
        if self.unix_socket is not None:
            server = UnixHTTPServer(str(self.unix_socket), Handler)
        else:
            server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
            server.daemon_threads = True
            self.port = server.server_address[1]
        # A client that hangs up mid-answer is part of these tests, not an error to print.
        server.handle_error = lambda request, client_address: None  # type: ignore[method-assign]
        self.server = server
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()

    def respond(self, path: str, body: Any) -> tuple[int, Any]:
        if self.status != 200:
            return self.status, {"detail": "Unauthorized" if self.status == 401 else "no"}
        if path == "/internal/ping":
            return 200, {"primary": True}
        if path == "/internal/memory":
            ids = self.memory.setdefault(body["key"], set())
            if body["op"] == "seen":
                return 200, {"ids": sorted(ids)}
            if body["op"] == "add":
                ids.update(body["ids"])
            else:
                self.memory.pop(body["key"], None)
            return 200, {"ids": []}
        if path == "/internal/tool":
            return 200, {
                "text": f"ran {body['tool']} for {body['folder']}",
                "is_error": body["tool"] == "bad",
            }
        return 404, {"detail": "Not Found"}

    def stop(self) -> None:
        """Gone: nothing listens any more (a connection is refused)."""
        self.released.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
            if self.unix_socket is not None:
                self.unix_socket.unlink(missing_ok=True)

    def paths(self) -> list[str]:
        return [request.path for request in self.requests]


@pytest.fixture
def primary() -> Iterator[Primary]:
    server = Primary()
    yield server
    server.stop()


@pytest.fixture
def connect() -> Iterator[Callable[..., PrimaryClient]]:
    made: list[PrimaryClient] = []

    def make(url: str, token: Callable[[], str | None] = lambda: TOKEN, **options: Any) -> PrimaryClient:
        client = PrimaryClient(url, token, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


def wait_for(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_the_sessions_memory_is_kept_by_the_primary(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    memory = RemoteSessionMemory(connect(primary.url))
    assert memory.seen("session") == frozenset()
    memory.add("session", ["ops/a.md#1", "ops/b.md#2"])
    memory.add("session", iter(["ops/c.md#1"]))  # any iterable of ids
    assert memory.seen("session") == frozenset({"ops/a.md#1", "ops/b.md#2", "ops/c.md#1"})
    assert memory.seen("another") == frozenset()
    memory.forget("session")
    assert memory.seen("session") == frozenset()
    assert {request.authorization for request in primary.requests} == {f"Bearer {TOKEN}"}
    assert [request.body["op"] for request in primary.requests] == [
        "seen",
        "add",
        "add",
        "seen",
        "seen",
        "forget",
        "seen",
    ]


def test_tools_are_forwarded_and_their_answers_come_back(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    client = connect(primary.url)
    arguments = {"path": "a.md", "text": "# A"}
    written = client.tool("ragdown_write", "ops", "db", arguments, "token team-b")
    assert written == ("ran ragdown_write for ops", False)
    assert client.tool("bad", None, "", {}) == ("ran bad for None", True)  # a tool's error is an answer
    assert [request.body for request in primary.requests] == [
        {
            "folder": "ops",
            "path": "db",
            "tool": "ragdown_write",
            "arguments": arguments,
            "caller": "token team-b",
        },
        {"folder": None, "path": "", "tool": "bad", "arguments": {}, "caller": ""},
    ]


def test_the_token_is_asked_for_on_every_call_until_there_is_one(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    """A reader may start before the primary made the data dir's token."""
    tokens: list[str | None] = [None, "made-later"]
    client = connect(primary.url, lambda: tokens[0])
    assert client.probe()
    tokens.pop(0)
    assert client.probe()
    assert [request.authorization for request in primary.requests] == [None, "Bearer made-later"]


def test_a_unix_socket_primary_is_reached_the_same_way(connect: Callable[..., PrimaryClient]) -> None:
    with tempfile.TemporaryDirectory(prefix="rd-client-") as folder:
        socket_path = Path(folder) / "primary.sock"
        client = connect(f"unix://{socket_path}")
        assert not client.probe()  # no primary yet: no socket
        assert RemoteSessionMemory(client).seen("s") == frozenset()
        primary = Primary(unix_socket=socket_path)
        try:
            assert client.probe()
            memory = RemoteSessionMemory(client)
            memory.add("s", ["x"])
            assert memory.seen("s") == frozenset({"x"})
            assert client.tool("ragdown_edit", "ops", "", {}) == ("ran ragdown_edit for ops", False)
        finally:
            primary.stop()


def test_a_stopped_primary_is_noticed_and_writes_are_refused_at_once(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    client = connect(primary.url)
    memory = RemoteSessionMemory(client)
    memory.add("s", ["x"])
    assert client.reachable()
    primary.stop()
    assert client.reachable()  # the last answer: reachable() asks nobody
    assert memory.seen("s") == frozenset()  # the hook goes on without it
    assert not client.reachable()
    with pytest.raises(PrimaryUnreachableError) as caught:
        client.tool("ragdown_write", "ops", "", {"path": "late.md", "text": "# Late"})
    assert isinstance(caught.value, RagdownError)
    assert caught.value.status == 503
    assert UNREACHABLE in caught.value.message

    primary.requests.clear()
    primary.start()  # back on the same port, but nobody has asked yet
    memory.add("s", ["y"])
    memory.forget("s")
    assert memory.seen("s") == frozenset()
    with pytest.raises(PrimaryUnreachableError, match="it did not answer the last probe"):
        client.tool("ragdown_write", "ops", "", {"path": "late.md", "text": "# Late"})
    assert primary.requests == []  # while it is known to be away, nothing is sent
    assert client.probe()
    assert client.tool("ragdown_write", "ops", "", {}) == ("ran ragdown_write for ops", False)
    assert memory.seen("s") == frozenset({"x"})  # what it kept while this reader could not reach it


def test_a_primary_slower_than_the_budget_is_not_waited_for(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    """Stopped with SIGSTOP, or hung: it accepts the connection and never answers. The hook's call gives
    up after its budget; the primary's answer comes only after that."""
    client = connect(primary.url)
    memory = RemoteSessionMemory(client)
    memory.add("s", ["x"])
    primary.hold = {"/internal/memory", "/internal/ping"}
    assert memory.seen("s") == frozenset()
    assert not primary.answered_held.is_set()  # the client gave up before the primary answered
    assert not client.reachable()
    asked = len(primary.requests)
    memory.add("s", ["y"])
    assert memory.seen("s") == frozenset()
    assert client.reachable() is False
    with pytest.raises(PrimaryUnreachableError):
        client.tool("ragdown_write", "ops", "", {})
    assert len(primary.requests) == asked  # nothing more was sent to it
    assert not client.probe()  # a probe has the same budget
    assert not primary.answered_held.is_set()

    primary.hold = set()
    primary.released.set()
    assert client.probe()
    assert memory.seen("s") == frozenset({"x"})


def test_a_primary_that_refuses_the_token_leaves_the_hook_answering(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    primary.status = 401
    client = connect(primary.url, lambda: "wrong-token")
    memory = RemoteSessionMemory(client)
    assert memory.seen("s") == frozenset()
    memory.add("s", ["x"])
    memory.forget("s")
    with pytest.raises(PrimaryUnreachableError, match="HTTP 401"):
        client.memory("seen", "s")
    with pytest.raises(PrimaryUnreachableError, match="HTTP 401"):
        client.tool("ragdown_write", "ops", "", {})
    assert not client.probe()  # a probe that is refused is no answer
    assert not client.reachable()
    sent = len(primary.requests)
    assert memory.seen("s") == frozenset()
    assert len(primary.requests) == sent


# A prober that outlived close() would die on the closed client: that must fail the test.
@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_the_background_probe_follows_the_primary_away_and_back(
    primary: Primary, connect: Callable[..., PrimaryClient]
) -> None:
    client = connect(primary.url, probe_every_s=0.02)
    client.start_probing()
    prober = client._prober
    client.start_probing()
    assert client._prober is prober  # one prober however often it is started
    wait_for(lambda: "/internal/ping" in primary.paths(), "the first probe")
    primary.stop()
    wait_for(lambda: not client.reachable(), "the probe to notice the primary is gone")
    primary.start()
    wait_for(client.reachable, "the probe to see the primary back")
    client.close()
    assert prober is not None
    prober.join(timeout=30)
    assert not prober.is_alive()


LOOPBACK = "127.0.0.1"


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: (certificate, key) as PEM files."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, LOOPBACK)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


def test_an_https_primary_is_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A TLS context is made only for an https URL (a socket or plain HTTP needs none), and that one
    verifies the primary's certificate: one signed by no authority the reader trusts is refused."""
    cert, key = self_signed(tmp_path)
    primary = Primary()
    server = primary.server
    assert isinstance(server, ThreadingHTTPServer)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://{LOOPBACK}:{primary.port}"
    try:
        untrusted = PrimaryClient(url, lambda: TOKEN)
        assert not untrusted.probe()  # the only difference from the next: whom it trusts
        untrusted.close()
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the same certificate, trusted
        trusted = PrimaryClient(url, lambda: TOKEN)
        assert trusted.probe()
        trusted.close()
    finally:
        primary.stop()
