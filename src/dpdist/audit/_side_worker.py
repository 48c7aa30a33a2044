"""The worker that runs a randomizer inside another Python environment (started by :mod:`dpdist.audit._side`).

Run as a script by that environment's interpreter: ``python _side_worker.py ADAPTERS_DIR MODULE CASE PARAMS_JSON``;
it imports only NumPy and the adapter module (which imports its library), never dpdist.  Requests on stdin, answers
on stdout, each a 8-byte little-endian length and a payload: a request is ``seed (8 bytes) + .npy of the values``,
its answer ``b"O" + .npy of the outputs`` or ``b"E" + the error's text``.  The first answer (to no request) is the
case's description as JSON: ``b"J" + {"version": ..., "claim": ..., ...}``.
"""

import io
import json
import random
import struct
import sys

import numpy as np


def _send(kind: bytes, payload: bytes) -> None:
    sys.stdout.buffer.write(struct.pack("<Q", len(payload) + 1) + kind + payload)
    sys.stdout.buffer.flush()


def _read(count: int) -> bytes:
    data = sys.stdin.buffer.read(count)
    if len(data) < count:
        raise EOFError
    return data


def main() -> None:
    folder, module_name, case, params = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    sys.path.insert(0, folder)
    module = __import__(module_name)
    built = module.build(case, **params)  # (sample, description)
    sample, description = built
    _send(b"J", json.dumps(description).encode())
    while True:
        try:
            (length,) = struct.unpack("<Q", _read(8))
        except EOFError:
            return
        request = _read(length)
        seed = struct.unpack("<Q", request[:8])[0]
        values = np.load(io.BytesIO(request[8:]), allow_pickle=False)
        np.random.seed(seed % 2**32)
        random.seed(seed)
        getattr(module, "seed", lambda s: None)(seed % 2**32)
        try:
            outputs = np.asarray(sample(values))
            buffer = io.BytesIO()
            np.save(buffer, outputs, allow_pickle=False)
            _send(b"O", buffer.getvalue())
        except Exception as error:  # the library's own failure, reported to the auditor in one line
            _send(b"E", f"{type(error).__name__}: {error}".encode())


if __name__ == "__main__":
    main()
