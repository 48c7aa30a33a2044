"""A randomizer that lives in another Python environment, audited from this one.

Libraries pin versions of NumPy and others that dpdist's environment cannot hold at once (trasgoDP 2.1.0
requires numpy 2.0.2, ldp-toolbox numpy >= 2.1.3): each is installed in an environment of its own and runs there
in a worker (:mod:`dpdist.audit._side_worker`, which imports NumPy and the library only), fed the audit's
values and seeds through a pipe.  The worker seeds NumPy's and Python's global generators (and the adapter's own,
e.g. numba's) from the audit's generator before each call, so a seeded audit of a library drawing from those
repeats exactly.
"""

from __future__ import annotations

import io
import json
import pathlib
import struct
import subprocess
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ._randomizer import Randomizer

__all__ = ["SideProcess", "in_environment"]

WORKER = pathlib.Path(__file__).with_name("_side_worker.py")


class SideProcess:
    """A worker process running one case of an adapter module in another interpreter (its pipes, its description)."""

    def __init__(self, python: str | pathlib.Path, folder: str | pathlib.Path, module: str, case: str,
                 params: dict[str, Any]):
        self.process = subprocess.Popen(
            [str(python), str(WORKER), str(folder), module, case, json.dumps(params)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        kind, payload = self._receive()
        if kind != b"J":
            raise InvalidParameterError(f"The adapter {module}:{case} failed to start: {payload.decode(errors='replace')}")
        self.description: dict[str, Any] = json.loads(payload)

    def _receive(self) -> tuple[bytes, bytes]:
        assert self.process.stdout is not None
        head = self.process.stdout.read(8)
        if len(head) < 8:
            error = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
            raise InvalidParameterError(f"The side worker stopped: {error.strip().splitlines()[-1:] or 'no output'}")
        (length,) = struct.unpack("<Q", head)
        payload = self.process.stdout.read(length)
        return payload[:1], payload[1:]

    def sample(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The worker's outputs for ``values``, its generators seeded from ``rng``."""
        assert self.process.stdin is not None
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(values), allow_pickle=False)
        request = struct.pack("<Q", int(rng.integers(2**63))) + buffer.getvalue()
        self.process.stdin.write(struct.pack("<Q", len(request)) + request)
        self.process.stdin.flush()
        kind, payload = self._receive()
        if kind != b"O":
            raise InvalidParameterError(payload.decode(errors="replace"))
        return np.load(io.BytesIO(payload), allow_pickle=False)

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)


def in_environment(python: str | pathlib.Path, folder: str | pathlib.Path, module: str, case: str,
                   **params: Any) -> tuple[Randomizer, SideProcess]:
    """A :class:`Randomizer` whose outputs come from ``module.build(case, **params)`` run by ``python``.

    ``module`` is a file in ``folder`` defining ``build(case, **params) -> (sample, description)``: ``sample(values)
    -> outputs`` calls the library, ``description`` is JSON (``name``, ``claim``, ``version``, optionally ``domain``,
    ``seeded``) stating what the library claims.  Close the returned :class:`SideProcess` when done.
    """
    worker = SideProcess(python, folder, module, case, params)
    about = worker.description
    domain = about.get("domain")
    return Randomizer(
        worker.sample, name=about.get("name", f"{module} {case}"), epsilon=about.get("claim"),
        domain=tuple(domain) if isinstance(domain, list) else domain, seeded=bool(about.get("seeded", True)),
        notes=tuple(about.get("notes", ())),
    ), worker
