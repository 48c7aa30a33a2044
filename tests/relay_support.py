"""Real processes for the relay's end-to-end tests: ``dpdist relay``, a ``dpdist serve`` that trusts it, and ``dpdist issuer``.

Both listen on 127.0.0.1 only, on free ports, and are stopped by the tests that start them
(``kill`` is SIGKILL, ``start`` restarts on the same port and files).
"""

from __future__ import annotations

import os
import sys

from serve_support import ADMIN_TOKEN, ServerProcess

RELAY_TOKEN = "test-relay-token-0123456789"


class CollectorProcess(ServerProcess):
    """``dpdist serve`` with the relay's token."""

    def environment(self) -> dict:
        return {**super().environment(), "DPDIST_RELAY_TOKEN": RELAY_TOKEN}


class RelayProcess(ServerProcess):
    """``dpdist relay`` in a subprocess, its queue in ``queue_path``, delivering to ``collector_url``."""

    def __init__(self, queue_path, collector_url: str, *, min_batch: int, max_batch: int, log_path=None, cpu: int | None = None,
                 options: tuple = ()):
        super().__init__(str(queue_path), log_path=log_path, cpu=cpu, options=options)
        self.collector_url, self.min_batch, self.max_batch = collector_url, min_batch, max_batch

    def command(self) -> list[str]:
        command = [sys.executable, "-m", "dpdist.cli", "relay", "--queue", self.db_url, "--collector", self.collector_url,
                   "--min-batch", str(self.min_batch), "--max-batch", str(self.max_batch), "--port", str(self.port),
                   "--admin-token", ADMIN_TOKEN, "--log-level", self.log_level, *self.options]
        return ["taskset", "-c", str(self.cpu), *command] if self.cpu is not None else command

    def environment(self) -> dict:
        return {**os.environ, "DPDIST_RELAY_TOKEN": RELAY_TOKEN}


ISSUER_ADMIN_TOKEN = "issuer-admin-token-0123456789"


class IssuerProcess(ServerProcess):
    """``dpdist issuer serve`` in a subprocess (its name in challenges: issuer.test)."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "dpdist.cli", "issuer", "serve", "--issuer-db", self.db_url, "--issuer-name", "issuer.test",
                "--port", str(self.port), "--log-level", self.log_level, *self.options]

    def environment(self) -> dict:
        return {**os.environ, "DPDIST_ISSUER_ADMIN_TOKEN": ISSUER_ADMIN_TOKEN}

    def credentials(self, key: str, count: int, tokens_each: int = 1) -> list[str]:
        """A key ``key`` (made if missing, with ``tokens_each`` as its ceiling) and ``count`` fresh credentials of
        ``tokens_each`` tokens each."""
        import httpx

        from dpdist._http._tls import verifying_context

        headers = {"authorization": f"Bearer {ISSUER_ADMIN_TOKEN}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=30, verify=verifying_context()) as issuer:
            issuer.post("/issuer/v1/keys", json={"name": key, "tokens_each": tokens_each})
            answer = issuer.post(f"/issuer/v1/keys/{key}/credentials", json={"count": count, "tokens_each": tokens_each})
        assert answer.status_code == 201, answer.text
        return answer.json()["credentials"]
