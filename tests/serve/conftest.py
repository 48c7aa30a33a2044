"""The service's fast tests compute estimates in this process, through the estimator's pickled frames.

An in-process app computes its estimates in the estimator process (``dpdist.serve._estimate_cache``), whose start
costs the fast loop ~3 CPU-s (Python, numpy, scipy imported a second time), for a dozen fast tests that check the
estimates, not the process.  In the fast loop (tests not marked ``slow``) the request and the answer still travel
as the estimator's frames (``_write``/``_read``: what cannot be pickled fails here too), but the computation runs in
this process.  The process itself (its start, time limit, queue bound, death with the server) is tested by
tests/serve/test_estimator.py and the end-to-end tests of real servers, in the whole suite.
"""

from __future__ import annotations

import io
import time

import pytest


def _compute_here(function, *arguments) -> tuple:
    """``_estimate_cache._compute`` without the process: ``(result, CPU seconds)``; exceptions raised here."""
    from dpdist.serve import _estimator  # lazy: only the serve tests that compute an estimate need it

    frames = io.BytesIO()
    _estimator._write(frames, (function, arguments))
    frames.seek(0)
    function, arguments = _estimator._read(frames)
    start = time.process_time()
    try:
        answer = (True, function(*arguments), time.process_time() - start)
    except Exception as error:  # noqa: BLE001 - raised below, as the server raises what the process sent back
        answer = (False, error, time.process_time() - start)
    frames = io.BytesIO()
    _estimator._write(frames, answer)
    frames.seek(0)
    ok, value, seconds = _estimator._read(frames)
    if not ok:
        raise value
    return value, seconds


@pytest.fixture(autouse=True)
def _fast_tests_compute_estimates_in_this_process(request, monkeypatch):
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setattr("dpdist.serve._estimate_cache._compute", _compute_here)
