"""Whether a command that serves HTTP (``dpdist serve``, ``relay``, ``issuer``) can listen where it was told to.

uvicorn reports an address it cannot bind with a log line (``[Errno 98] error while attempting to bind on address
...``) and exit status 1, naming neither option (docs/how-to/operate-the-service.md, "Waiting for the service to start").  :func:`check_address` binds the address first, as asyncio will (``SO_REUSEADDR``,
IPv6 sockets IPv6-only), and closes it at once: a failure is one line naming ``--host`` / ``--port`` and the address.
"""

from __future__ import annotations

import errno
import socket

from ..errors import InvalidParameterError

__all__ = ["check_address"]


def check_address(host: str, port: int, command: str) -> None:
    """Refuse, naming ``--host`` / ``--port``, an address ``command`` cannot listen on (in use, not this machine's)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise InvalidParameterError(f"The '--host' option of {command} must be an address or name of this machine: "
                                    f"{host!r} cannot be resolved ({error.strerror}).") from None
    for family, kind, proto, _, address in addresses:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                probe.bind(address)
        except OSError as error:
            raise InvalidParameterError(_cannot_listen(command, where, port, error)) from None


def _cannot_listen(command: str, where: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (f"The '--port' option of {command}: {where} is in use (another process listens there, perhaps another "
                f"{command}): stop it, or give another --port (or --host).")
    if error.errno == errno.EADDRNOTAVAIL:
        return f"The '--host' option of {command}: {where} is not an address of this machine ({error.strerror})."
    if error.errno == errno.EACCES and port < 1024:
        return (f"The '--port' option of {command}: {where} needs privileges to listen on (a port below 1024): give "
                f"a port of 1024 or more, and put a reverse proxy on {port} in front (docs/how-to/run-a-campaign.md).")
    return f"The '--host' and '--port' options of {command}: cannot listen on {where} ({error.strerror})."
