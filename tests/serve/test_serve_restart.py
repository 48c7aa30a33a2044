"""Issue 61 item 5: devices ride out a restart of the service on their first run, and nothing is counted twice.

``dpdist submit`` processes (the command a device runs, with its defaults but a
small batch size) send their values while the service is SIGKILLed and started
again only after several seconds without anyone listening (a restart under load
took 2.3-3.9 s at load 6, longer at load 10); one of them starts while nothing
listens, so it has never been answered.  Every command finishes on its first run
(the retry window, 5 minutes by default, covers the restarts) and the campaign
counts each value once.  On main a fresh command gave up after about 4 s of
refused connections (exit 2), and the others after their 8 retries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

from serve_support import ADMIN_TOKEN, ServerProcess, database_url

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
#: seconds nothing listens after each kill (longer than the 4 s after which a fresh client of main gave up)
DOWN_S = 6.0


def _submit(url: str, data, journal) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dpdist.cli", "submit", str(data), "--campaign", "c", "--column", "v",
                             "--server", url, "--batch-size", "50", "--journal", str(journal)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if not k.startswith("DPDIST_")})


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_submitters_finish_on_their_first_run_across_restarts(kind, tmp_path):
    values = np.random.default_rng(61).integers(0, 16, 4 * 600)
    files = []
    for index in range(4):
        path = tmp_path / f"device{index}.csv"
        path.write_text("v\n" + "\n".join(str(value) for value in values[index * 600 : (index + 1) * 600]) + "\n")
        files.append(path)
    with database_url(kind, tmp_path) as url:
        server = ServerProcess(url, options=("--rate-limit", "0")).start(timeout=120)
        try:
            assert httpx.post(f"{server.url}/api/campaigns", json={"campaign": "c", "config": GRR}, headers=ADMIN,
                              timeout=60).status_code == 201
            assert httpx.post(f"{server.url}/api/campaigns/c/open", headers=ADMIN, timeout=60).status_code == 200
            running = [_submit(server.url, files[index], tmp_path / f"journal{index}") for index in range(3)]
            time.sleep(1.5)
            for kill in range(3):
                server.kill()
                if kill == 0:  # a device that starts while nothing listens: never answered before
                    running.append(_submit(server.url, files[3], tmp_path / "journal3"))
                time.sleep(DOWN_S)
                server.start(timeout=120)
                time.sleep(1.0)
            outcomes = [process.communicate(timeout=600) for process in running]
            codes = [process.returncode for process in running]
            assert codes == [0] * 4, [error[-800:] for _, error in outcomes]
            assert all("did not answer" in error and "--retry-window" in error for _, error in outcomes[3:])
            document = httpx.get(f"{server.url}/api/campaigns/c", headers=ADMIN, timeout=60).json()
            assert document["n"] == len(values) and document["batches"] == 4 * 600 // 50  # each value once
        finally:
            server.stop()
