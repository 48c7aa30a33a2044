"""Real servers for the tests of ``dpdist serve``: the service as a subprocess, a throwaway PostgreSQL.

Both listen on 127.0.0.1 only, on a free port, and are stopped (and their files
removed) by the fixtures that start them.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

import server_zygote
from dpdist._http._tls import verifying_context

if TYPE_CHECKING:
    from dpdist.client import AdminClient, Client

ADMIN_TOKEN = "test-admin-token-0123456789"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """``dpdist serve`` in a subprocess (its own process group: with ``workers`` > 1 a supervisor and its worker
    processes); :meth:`kill` is SIGKILL to all of them, :meth:`start` (re)starts it on the same port.

    It is forked from the test process's zygote (:mod:`server_zygote`: its libraries imported once) unless
    :attr:`forked` is False: a test of what ``ps`` shows of it, or of its interpreter's start, sets that."""

    #: whether :meth:`start` forks the server from the zygote (else it runs its command with :mod:`subprocess`)
    forked = True

    def __init__(self, db_url: str, *, max_body_bytes: int | None = None, log_path=None, cpu: int | None = None, log_level: str = "warning",
                 workers: int = 1, options: tuple = ()):
        self.db_url = db_url
        self.workers = workers
        self.options = tuple(options)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.max_body_bytes = max_body_bytes
        self.log_path = log_path
        self.log_level = log_level
        self.cpu = cpu  # pin the server to this core (benchmarks): taskset execs, so the pid is the server's
        self.process = None

    def command(self) -> list[str]:
        """The server's command line (subclasses add options)."""
        command = [sys.executable, "-m", "dpdist.cli", "serve", "--db", self.db_url, "--port", str(self.port), "--log-level", self.log_level]
        if self.max_body_bytes is not None:
            command += ["--max-body-bytes", str(self.max_body_bytes)]
        if self.workers != 1:
            command += ["--workers", str(self.workers)]
        command += list(self.options)
        if self.cpu is not None:
            command = ["taskset", "-c", str(self.cpu), *command]
        return command

    def environment(self) -> dict:
        """The server's environment (subclasses add variables)."""
        return {**os.environ, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN}

    def start(self, timeout: float = 60.0) -> "ServerProcess":
        command, environment = self.command(), self.environment()
        self.process = server_zygote.start(command, environment, self.log_path) if self.forked else None
        if self.process is None:  # a command not ``python -m dpdist.cli``, or a test of the process's own start
            log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
            self.process = subprocess.Popen(command, env=environment, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
            if log is not subprocess.DEVNULL:
                log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dpdist serve exited with status {self.process.returncode}{self._log_tail()}")
            if self.listening():  # an HTTP request costs 5 ms of CPU, a refused connection 0.05
                with contextlib.suppress(httpx.TransportError):
                    if httpx.get(self.url + "/healthz", timeout=1.0, verify=verifying_context()).status_code == 200:
                        return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"dpdist serve did not start in {timeout:.0f} s{self._log_tail()}")

    def listening(self) -> bool:
        """Whether something accepts connections on the server's port."""
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1.0):
            return True
        return False

    def _log_tail(self, lines: int = 12) -> str:
        """The end of the server's log, for an error message (empty without a log file)."""
        if not self.log_path or not Path(self.log_path).exists():
            return ""
        tail = Path(self.log_path).read_text(errors="replace").splitlines()[-lines:]
        return "; its log ends:\n" + "\n".join(tail)

    def rss_bytes(self) -> int:
        """Resident memory of the server process."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def pids(self) -> list[int]:
        """The server's processes: the one started and the rest of its process group (workers, the estimator)."""
        found = [self.process.pid]
        for path in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = path.read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == self.process.pid and int(path.parent.name) != self.process.pid:  # fields: state, ppid, pgrp
                    found.append(int(path.parent.name))
        return found

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server's processes so far (from /proc)."""
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / ticks

    def kill(self, timeout: float = 60.0) -> None:
        """SIGKILL every process of the server at once (a power cut, as far as the server can tell); return once every
        one of them has exited.

        Waiting for the process started is not enough: its workers (``workers`` > 1) and the estimator are not this
        process's children, and may still be exiting, with their copy of the listening socket open, when it has been
        reaped; a :meth:`start` on the same port meanwhile exits on "address already in use" (a bind of the port right
        after the reap failed in 6 of 8 kills of a 2-worker server at load 7, the port free 0-40 ms later).  So it
        waits until no thread of the group runs and the port can be bound."""
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        deadline = time.monotonic() + timeout
        while running := self.running_in_group():
            if time.monotonic() > deadline:
                raise RuntimeError(f"processes {running} of dpdist serve still run {timeout:.0f} s after SIGKILL")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            time.sleep(0.005)
        while not self.port_free():  # and nothing else holds it meanwhile
            if time.monotonic() > deadline:
                raise RuntimeError(f"port {self.port} is still taken {timeout:.0f} s after dpdist serve was SIGKILLed")
            time.sleep(0.005)

    def port_free(self) -> bool:
        """Whether the server's port can be bound now, as uvicorn binds it (``SO_REUSEADDR``: a connection of the
        killed server in TIME_WAIT does not hold it; a listening socket still open does)."""
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", self.port))
            except OSError:
                return False
        return True

    def running_in_group(self) -> list[int]:
        """The processes of the server's process group with a thread that has not exited (a process shows as a zombie
        once its main thread has, while another may still be exiting, its files open: seen after a SIGKILL, with the
        port still taken)."""
        running = []
        for path in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = path.read_text().rsplit(")", 1)[1].split()  # state, ppid, pgrp, ...
                if int(fields[2]) == self.process.pid and any(
                    task.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
                    for task in path.parent.glob("task/*/stat")
                ):
                    running.append(int(path.parent.name))
        return running

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):  # what may be left of its group (a worker, the estimator)
                os.killpg(self.process.pid, signal.SIGKILL)


def _initdb() -> str | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return found[-1] if found else (shutil.which("initdb") or None)


def postgres_available() -> bool:
    return _initdb() is not None


class PostgresCluster:
    """A throwaway PostgreSQL cluster in a temporary directory (run as user ``postgres`` when we are root)."""

    def __init__(self):
        self.bin = Path(_initdb()).parent
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="dpdist-pg-"))
        self.data = self.root / "data"
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
            os.chmod(self.root, 0o700)

    def _run(self, *args: str, check: bool = True):
        command = [str(a) for a in args]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, cwd=self.root, timeout=120)

    def start(self) -> "PostgresCluster":
        self._run(self.bin / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=on"
        self._run(self.bin / "pg_ctl", "-D", self.data, "-o", options, "-l", self.root / "log", "-w", "-t", "60", "start")
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(self.bin / "pg_ctl", "-D", self.data, "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def admin_headers() -> dict:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}


#: the PostgreSQL cluster of this process's :func:`database_url` (started at its first use)
_SHARED_CLUSTER: list[PostgresCluster] = []


def shared_cluster() -> PostgresCluster:
    """This process's throwaway PostgreSQL cluster, started at its first use and stopped when the process ends (the
    session's reaper kills it should the process be killed: tests/session_reaper.py)."""
    if not _SHARED_CLUSTER:
        cluster = PostgresCluster().start()
        atexit.register(cluster.stop)
        _SHARED_CLUSTER.append(cluster)
    return _SHARED_CLUSTER[0]


@contextlib.contextmanager
def database_url(kind: str, folder, name: str = "campaigns.sqlite"):
    """A fresh database of ``kind`` ("sqlite": a file in ``folder``; "postgresql": a database of its own, created empty
    in this process's cluster, skipped where PostgreSQL is not installed): its URL.

    One cluster for the process, a database for each use: a cluster of its own for each use ran initdb, a start and a
    stop each time (0.6 CPU-s of initdb measured, and the server's own start and stop; 21 uses in the whole suite),
    while what a test reads and writes is its database's alone (no test is given the cluster)."""
    if kind == "sqlite":
        yield str(Path(folder) / name)
        return
    if not postgres_available():
        import pytest

        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    yield shared_cluster().new_database()


@contextlib.contextmanager
def cli_against_app(tmp_path, monkeypatch, *, admin: str, submit: str, server: str):
    """Every :class:`dpdist.client.Client` and :class:`~dpdist.client.AdminClient` the command line makes talks to one
    in-process service (``create_app`` on ``tmp_path``, through Starlette's test client at ``server``); yields that test
    client."""
    import warnings

    with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from dpdist.serve import create_app
    from dpdist.client import AdminClient, Client

    app = create_app(str(tmp_path / "campaigns.sqlite"), admin_token=admin)
    with TestClient(app, base_url=server) as http:
        for kind in (Client, AdminClient):
            def through_the_app(self, url, *, original=kind.__init__, **options):
                original(self, url, **options)
                self._http.close()
                self._http = http

            monkeypatch.setattr(kind, "__init__", through_the_app)
            monkeypatch.setattr(kind, "close", lambda self: None)
        monkeypatch.setenv("DPDIST_ADMIN_TOKEN", admin)
        monkeypatch.setenv("DPDIST_SUBMIT_TOKEN", submit)
        monkeypatch.setenv("DPDIST_CACHE_DIR", str(tmp_path / "cache"))
        yield http


@contextlib.contextmanager
def fast_path_client(tmp_path, monkeypatch, fast_path, config: dict, submit_token: str):
    """A TestClient of an application with one open campaign ``fast`` of ``config`` (devices send ``submit_token``),
    and the list of paths ``fast_path`` (a class with ``_work``, e.g. ``BatchFastPath``) served, as a context manager."""
    import warnings

    with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from dpdist.serve import create_app

    calls: list[str] = []
    work = fast_path._work

    def counted(self, scope, found, receive):
        calls.append(scope["path"])
        return work(self, scope, found, receive)

    monkeypatch.setattr(fast_path, "_work", counted)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js")
    with TestClient(app) as client:
        created = client.post("/api/campaigns", json={"campaign": "fast", "config": config, "submit_token": submit_token},
                              headers=admin)
        assert created.status_code == 201, created.text
        assert client.post("/api/campaigns/fast/open", headers=admin).status_code == 200
        yield client, calls


class HeldMessages:
    """uvicorn's request cycle as :func:`dpdist._guard._body.body_ready` sees it: its messages there already (a held
    body is read at once, without a deadline; a test client's ``receive`` is not one)."""

    def __init__(self, messages):
        self.messages = list(messages)
        self.message_event = asyncio.Event()
        self.message_event.set()

    async def receive(self):
        return self.messages.pop(0)


#: seconds a client of these tests retries a request before it gives up (its attempts are not counted: under a load
#: of 8-12 on two cores a restarted server, and 503 busy with Retry-After up to 30 s, can take many of them)
RETRY_FOR_S = 600.0


def patient_client(url: str, stop: threading.Event | None = None, **options) -> Client | AdminClient:
    """A :class:`Client` (with ``admin_token``, an :class:`AdminClient`) that retries a request (the same bytes) for :data:`RETRY_FOR_S` seconds from its first failure
    (its retry window), however many attempts that takes, and no more once ``stop`` is set (the test has ended: no
    thread of it keeps retrying for minutes)."""

    def give_up(failure: str, attempt: int, wait: float, remaining: int) -> None:
        if stop is not None and stop.is_set():
            raise RuntimeError(f"the test ended; the client gave up after attempt {attempt} ({failure})")

    from dpdist.client import AdminClient, Client  # lazy: the servers' tests that start no client do not load it

    kind = AdminClient if "admin_token" in options else Client
    return kind(url, retry_window=RETRY_FOR_S, backoff=0.05, on_retry=give_up, **options)


def start_clients(url: str, plan: list, send, *, stop: threading.Event):
    """A thread per client of ``plan`` sending its batches in turn (``send(client, batch)``, retried with the same
    bytes by a :func:`patient_client` until ``stop`` is set); returns the acknowledgements by batch id (filled as they
    come), the failures and the threads."""
    acks: dict[str, dict] = {}
    failures: list[BaseException] = []

    def run(batches):
        try:
            with patient_client(url, stop) as client:
                for batch in batches:
                    acks[batch[0]] = send(client, batch)
        except BaseException as error:  # reported by the test
            failures.append(error)

    threads = [threading.Thread(target=run, args=(batches,), daemon=True) for batches in plan]
    for thread in threads:
        thread.start()
    return acks, failures, threads
