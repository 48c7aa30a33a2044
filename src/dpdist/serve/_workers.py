"""``dpdist serve --workers N``: N processes on one listening socket, each its own event loop and group committer.

uvicorn's supervisor binds the socket (marked TCP, so that the workers'
connections get ``TCP_NODELAY``: :func:`dpdist._guard.listening_socket`),
starts the workers (spawned: each builds its application from
:func:`worker_app`, reading its settings from the environment variable
:data:`SETTINGS`), restarts a worker that dies, and stops
them all on SIGTERM.  The workers share nothing but the database: each appends
its own rows to the ingest log and folds them into its own part of each
campaign (:mod:`._aggregates`), so they never wait for one another's rows (on
SQLite, only for the database's one write lock, a group commit at a time).
"""

from __future__ import annotations

import dataclasses
import json
import os

import uvicorn
import uvicorn.supervisors

from .._guard._sockets import listening_socket
from ._app import create_app
from ._limits import Limits, protocol_class
from ._operations import Operations

__all__ = ["SETTINGS", "worker_app", "run_workers"]

#: the environment variable that carries the settings of the workers (JSON)
SETTINGS = "DPDIST_SERVE_WORKER_SETTINGS"
#: seconds a worker may take to answer its supervisor's health check before it is replaced
WORKER_HEALTHCHECK_S = 60


def worker_app():
    """The application of one worker process (uvicorn calls it: ``factory=True``)."""
    settings = json.loads(os.environ[SETTINGS])
    app = create_app(
        settings["db"],
        admin_token=settings["admin_token"],
        max_body_bytes=settings["max_body_bytes"],
        limits=Limits(**settings["limits"]),
        operations=Operations(**settings["operations"]),
        relay_token=settings["relay_token"],
        previous_relay_token=settings["previous_relay_token"],
        previous_admin_token=settings["previous_admin_token"],
    )
    app.state.freeze_heap = True  # a server process: its startup heap left out of full collections (_heap)
    return app


def run_workers(workers: int, *, db: str, admin_token: str, max_body_bytes: int, limits, operations,
                relay_token: str | None = None, previous_relay_token: str | None = None,
                previous_admin_token: str | None = None, host: str, port: int, **uvicorn_options) -> None:
    """Serve with ``workers`` processes until SIGTERM or SIGINT (uvicorn's supervisor)."""
    os.environ[SETTINGS] = json.dumps({
        "db": db, "admin_token": admin_token, "relay_token": relay_token, "previous_relay_token": previous_relay_token,
        "previous_admin_token": previous_admin_token,
        "max_body_bytes": max_body_bytes,
        "limits": dataclasses.asdict(limits), "operations": dataclasses.asdict(operations),
    })
    uvicorn_options["http"] = protocol_class(http=limits.http)  # importable by name: the workers unpickle the configuration
    # a worker that does not answer the supervisor's ping in time is killed and replaced: give a worker starting on a
    # busy machine (or holding the GIL with a large batch) a minute, not uvicorn's 5 s
    config = uvicorn.Config("dpdist.serve._workers:worker_app", factory=True, host=host, port=port, workers=workers,
                            timeout_worker_healthcheck=WORKER_HEALTHCHECK_S, **uvicorn_options)
    setattr(config, "dpdist_header_timeout", limits.header_timeout)  # read by the workers' protocol class
    setattr(config, "dpdist_max_pending_heads", limits.max_pending_heads_per_address)  # likewise
    # the listening socket marked TCP, so that every worker's connections get TCP_NODELAY (_guard._sockets)
    uvicorn.supervisors.Multiprocess(config, sockets=[listening_socket(config)]).run()
