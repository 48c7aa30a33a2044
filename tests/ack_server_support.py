"""A tiny HTTP server on 127.0.0.1 that answers batches from a script (tests of what a client takes as an
acknowledgement): it keeps every request it got and counts each batch id it acknowledged once."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["AckServer", "right_ack"]


def right_ack(campaign: str, batch_id: str, accepted: int = 1) -> bytes:
    """The body of ``dpdist serve``'s acknowledgement of a new batch (``_group.acknowledgement``)."""
    return json.dumps({"campaign": campaign, "batch_id": batch_id, "n_read": accepted, "accepted": accepted,
                       "rejected": {}, "duplicate": False}).encode()


class AckServer:
    """``answers``: bodies (bytes) or callables ``(campaign, batch_id) -> bytes`` given to the batches' PUTs in turn, all
    with status 200; after the last, the last again.  ``config``: the document of ``GET .../config``.  Each connection
    is handled within 10 s (a client that hangs cannot hold the test)."""

    def __init__(self, answers, config: dict | None = None):
        self.answers, self.config = list(answers), config
        self.requests: list[tuple[str, bytes]] = []  # (path, body) of every PUT
        self.counted: list[tuple[str, str, bytes]] = []  # (campaign, batch id, body) of each right acknowledgement
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 10

            def log_message(self, *args):  # quiet
                pass

            def _send(self, body: bytes, content_type: str = "application/json") -> None:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(json.dumps(outer.config).encode())

            def do_PUT(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                parts = self.path.split("/")  # /api/campaigns/<c>/batches/<id>
                campaign, batch_id = parts[3], parts[5]
                with outer._lock:
                    outer.requests.append((self.path, body))
                    answer = outer.answers[min(len(outer.requests), len(outer.answers)) - 1]
                answer = answer(campaign, batch_id) if callable(answer) else answer
                if answer == right_ack(campaign, batch_id):
                    with outer._lock:
                        outer.counted.append((campaign, batch_id, body))
                self._send(answer, "application/json" if answer.startswith(b"{") else "text/html")

        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def script(self, answers) -> None:
        """Answer from now on as ``answers`` says, the requests and acknowledgements kept so far forgotten."""
        with self._lock:
            self.answers, self.requests, self.counted = list(answers), [], []

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
