"""A TCP proxy in front of the tests' PostgreSQL that loses the answer to a COMMIT: the transaction is
committed on the server, and the client sees its connection closed ("server closed the connection
unexpectedly"), which is what a network fault at that instant does. Issue 46's exactly-once writes are
tested through it (tests/fleet/test_once_writes.py)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType

# the server's CommandComplete message for COMMIT: type 'C', length 4 + len("COMMIT\0"), the tag
COMMIT_DONE = b"C\x00\x00\x00\x0bCOMMIT\x00"
CHUNK = 1 << 16


class CommitDropProxy:
    """Listens on 127.0.0.1 and forwards each connection to PostgreSQL on `port`. `arm(sql, times)`: the
    next `times` transactions that send a statement containing `sql` have their COMMIT reach the server
    and the connection dropped before its answer reaches the client (several pieces of SQL can be armed
    at once); `dropped` counts them. `cut(seconds)`: a network fault, every connection through it closed
    and new ones refused until it ends. A connection made while PostgreSQL is down is closed at once (the
    client sees the refusal), not left unanswered."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.dropped = 0
        self._armed: dict[bytes, int] = {}  # SQL -> answers still to lose
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cut_until = 0.0
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, user: str, database: str) -> str:
        return f"postgresql+psycopg2://{user}@127.0.0.1:{self.port}/{database}"

    def arm(self, sql: bytes, times: int = 1) -> None:
        with self._lock:
            self._armed[sql] = times

    def cut(self, seconds: float) -> None:
        """Close every connection through the proxy and refuse new ones for `seconds`."""
        with self._lock:
            self._cut_until = time.monotonic() + seconds
            sockets, self._sockets = self._sockets, []
        _close(*sockets)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            try:
                if time.monotonic() < self._cut_until:
                    raise ConnectionRefusedError("the network is cut")
                server = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:  # PostgreSQL down or the network cut: the client's connection ends at once
                _close(client)
                continue
            self._sockets += [client, server]
            marked: list[bytes] = []  # the armed SQL this connection's open transaction sent
            threading.Thread(target=self._to_server, args=(client, server, marked), daemon=True).start()
            threading.Thread(target=self._to_client, args=(server, client, marked), daemon=True).start()

    def _to_server(self, client: socket.socket, server: socket.socket, marked: list[bytes]) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(CHUNK):
                with self._lock:
                    marked += [sql for sql, times in self._armed.items() if times and sql in data]
                server.sendall(data)
        _close(client, server)

    def _to_client(self, server: socket.socket, client: socket.socket, marked: list[bytes]) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(CHUNK):
                if COMMIT_DONE in data and marked:
                    with self._lock:
                        sql = next((sql for sql in marked if self._armed.get(sql)), None)
                        marked.clear()
                        if sql is not None:
                            self._armed[sql] -= 1
                            self.dropped += 1
                    if sql is not None:  # committed on the server; the client never hears it
                        break
                client.sendall(data)
        _close(client, server)

    def close(self) -> None:
        self.listener.close()
        for sock in self._sockets:
            _close(sock)

    def __enter__(self) -> CommitDropProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()
