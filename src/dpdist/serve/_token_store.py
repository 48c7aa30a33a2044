"""A device's Privacy Pass tokens between getting them and spending them: spare ones, and the one bound to each report.

A token costs the device one of its credential's few tokens, so it is never dropped while its report may
still be sent: a device gets its tokens *before* it randomizes (:meth:`TokenStore.add`), binds one to a
report when it first sends it (:meth:`TokenStore.take`), and sends the same token with every resend of
that report (the relay counts the report once, and a token once).  A token the relay refused
(:meth:`TokenStore.drop`) is forgotten, so a resend takes another.  Tokens are kept per identity pin (a
token is bound to one campaign identity), in memory, or in a JSON file (owner-only, replaced atomically)
that outlives the process, as ``dpdist submit`` keeps one beside its journal.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from .._io._atomic import atomic_writer

__all__ = ["TokenStore"]


class TokenStore:
    """Spare and bound tokens of one device (module docstring); ``path``: the JSON file that keeps them, or None."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = None if path is None else Path(path)
        self._spare: dict[str, list[str]] = {}
        self._bound: dict[str, str] = {}
        if self.path is not None and self.path.exists():
            document = json.loads(self.path.read_text())
            self._spare, self._bound = dict(document.get("spare", {})), dict(document.get("bound", {}))

    def spare(self, pin: str) -> int:
        """How many spare tokens of the identity ``pin`` wait."""
        return len(self._spare.get(pin, ()))

    def add(self, pin: str, tokens: list[bytes]) -> None:
        """Keep ``tokens`` of the identity ``pin`` as spare (saved before this returns)."""
        self._spare.setdefault(pin, []).extend(_text(token) for token in tokens)
        self.save()

    def bound(self, pin: str, report_id: str) -> bytes | None:
        """The token bound to the report ``report_id`` of the identity ``pin``, or None."""
        token = self._bound.get(f"{pin}:{report_id}")
        return None if token is None else _bytes(token)

    def take(self, pin: str, report_id: str) -> bytes:
        """The report's token: the one bound to it, else a spare one bound to it now (KeyError: none left)."""
        key = f"{pin}:{report_id}"
        if key not in self._bound:
            self._bound[key] = self._spare[pin].pop()
        return _bytes(self._bound[key])

    def drop(self, pin: str, report_id: str) -> None:
        """Forget the report's token (the relay refused it): a resend takes another."""
        if self._bound.pop(f"{pin}:{report_id}", None) is not None:
            self.save()

    def save(self) -> None:
        if self.path is None:
            return

        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with atomic_writer(self.path, private=True) as handle:
            handle.write(json.dumps({"spare": self._spare, "bound": self._bound}).encode())


def _text(token: bytes) -> str:
    return base64.b64encode(token).decode("ascii")


def _bytes(text: str) -> bytes:
    return base64.b64decode(text)
