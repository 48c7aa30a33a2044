"""Debian's nginx in front of a test server, configured as docs/how-to/reverse-proxy.md ("Behind a reverse proxy") does it.

:class:`Nginx` writes a configuration into a temporary folder (the guide's
``location /dpdist/`` block, nothing else changed but where nginx keeps its
files), starts ``nginx`` in the foreground on a free port of 127.0.0.1 and
stops it (SIGQUIT, then SIGKILL) when its ``with`` block ends.  It refuses to
start where nginx is not installed (``.ci/run`` installs Debian's ``nginx``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from serve_support import free_port

__all__ = ["Nginx", "nginx_binary", "LOCATION"]

#: the guide's location block (docs/how-to/reverse-proxy.md, "Behind a reverse proxy"), the upstream's port left to fill in
LOCATION = """
        location /dpdist/ {{
            proxy_pass http://127.0.0.1:{upstream}/;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            client_max_body_size 16m;
            proxy_request_buffering on;
        }}
"""


def nginx_binary() -> str | None:
    """Where nginx is installed (Debian puts it in /usr/sbin, which is not on every PATH), or None."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    return found


class Nginx:
    """nginx proxying ``/dpdist/`` to ``127.0.0.1:upstream`` (see the module).  ``worker_connections``: nginx's own
    limit per worker (Debian's nginx.conf has 768; every proxied request holds two connections)."""

    def __init__(self, upstream: int, *, worker_connections: int = 4096):
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (Debian: apt-get install nginx; .ci/run installs it)")
        self.binary, self.upstream, self.worker_connections = binary, upstream, worker_connections
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/dpdist"
        self.folder: Path | None = None
        self.process: subprocess.Popen | None = None

    def configuration(self, folder: Path) -> str:
        files = "".join(f"    {name}_temp_path {folder / name};\n" for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return (f"daemon off;\nworker_processes 1;\npid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'} warn;\n"
                f"events {{ worker_connections {self.worker_connections}; }}\n"
                f"http {{\n    access_log off;\n{files}"
                f"    server {{\n        listen 127.0.0.1:{self.port};\n{LOCATION.format(upstream=self.upstream)}    }}\n}}\n")

    def __enter__(self) -> "Nginx":
        self.folder = Path(tempfile.mkdtemp(prefix="dpdist-nginx-"))
        self.folder.chmod(0o755)  # nginx's workers (user nobody when started as root) write its temporary files here
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.folder / name).mkdir(mode=0o777)
            (self.folder / name).chmod(0o777)
        config = self.folder / "nginx.conf"
        config.write_text(self.configuration(self.folder))
        self.process = subprocess.Popen([self.binary, "-p", str(self.folder), "-c", str(config), "-e",
                                         str(self.folder / "error.log")], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"nginx exited with status {self.process.returncode}: {self.errors()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return self
            time.sleep(0.05)
        self.__exit__(None, None, None)
        raise RuntimeError(f"nginx did not start in 30 s: {self.errors()}")

    def errors(self) -> str:
        """nginx's error log so far."""
        log = self.folder / "error.log" if self.folder else None
        return log.read_text(errors="replace") if log is not None and log.exists() else ""

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT)  # graceful: the workers finish what they serve
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):  # its workers, should any be left
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
