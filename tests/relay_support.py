"""Real processes for the relay's end-to-end tests: ``dpdist relay`` and a ``dpdist serve`` that trusts it.

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
