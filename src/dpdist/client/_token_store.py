"""A device's Privacy Pass tokens between getting them and spending them: spare ones, and the one bound to each report.

A token costs the device one of its credential's few tokens, so it is never dropped while its report may
still be sent: a device gets its tokens *before* it randomizes (:meth:`TokenStore.add`), each with the seed of
the HPKE key its report will be encapsulated with (the token's nonce commits to that key: :mod:`dpdist._wire._binding`),
binds one to a report when it first sends it (:meth:`TokenStore.take`), encapsulates the report with its seed once
and keeps the request's bytes (:meth:`TokenStore.seal`, saved before the report leaves), and sends the same token
and bytes with every resend of that report (the relay counts the report once, and a token once).  The seed is
forgotten once the relay acknowledged the report (:meth:`TokenStore.acknowledged`): with the bytes it opens the
report, so the file is the device's own.  A token the relay refused (:meth:`TokenStore.drop`) is forgotten, so a
resend takes another.  Tokens are kept per identity pin (a token is bound to one campaign identity), in memory, or
in a JSON file (owner-only, replaced atomically) that outlives the process, as ``dpdist submit`` keeps one beside
its journal.  A file of an earlier version may hold a report sealed in dpdist's deprecated envelope (``"dpdist"``):
while its seed is kept the report is encapsulated again (the same key, to the other recipient key); once the relay
acknowledged it, the kept bytes are what a resend carries.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from .._io._atomic import atomic_writer
from ..errors import IncompatibleStateError

__all__ = ["TokenStore"]

#: the file's format: each token with its seed and, once bound, its report's bytes (``"ohttp"``; ``"dpdist"``: an
#: earlier version's envelope)
_VERSION = 2


class TokenStore:
    """Spare and bound tokens of one device (module docstring); ``path``: the JSON file that keeps them, or None."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = None if path is None else Path(path)
        self._spare: dict[str, list[dict[str, str]]] = {}
        self._bound: dict[str, dict[str, str]] = {}
        if self.path is not None and self.path.exists():
            document = json.loads(self.path.read_text())
            if not isinstance(document, dict) or document.get("version") != _VERSION:
                raise IncompatibleStateError(
                    f"The token file {self.path} holds tokens of an earlier dpdist, not bound to the reports they admit, "
                    "which no relay admits: remove it (its tokens are lost) and send again.")
            self._spare, self._bound = dict(document["spare"]), dict(document["bound"])

    def spare(self, pin: str) -> int:
        """How many spare tokens of the identity ``pin`` wait."""
        return len(self._spare.get(pin, ()))

    def add(self, pin: str, tokens: list[tuple[bytes, bytes]]) -> None:
        """Keep ``tokens`` (each a token and the seed its nonce commits to) of the identity ``pin`` as spare (saved
        before this returns)."""
        self._spare.setdefault(pin, []).extend({"token": _text(token), "seed": _text(seed)} for token, seed in tokens)
        self.save()

    def bound(self, pin: str, report_id: str) -> bool:
        """Whether a token is bound to the report ``report_id`` of the identity ``pin``."""
        return f"{pin}:{report_id}" in self._bound

    def take(self, pin: str, report_id: str) -> tuple[bytes, bytes | None, bytes | None]:
        """The report's ``(token, seed, sealed)``: the token bound to it (else a spare one bound to it now; KeyError:
        none left), its seed (None once forgotten) and its request's bytes (None before :meth:`seal`; once the seed is
        forgotten, the bytes it was acknowledged in, which the relay knows)."""
        key = f"{pin}:{report_id}"
        if key not in self._bound:
            self._bound[key] = self._spare[pin].pop()
        entry = self._bound[key]
        sealed = entry.get("ohttp") or (None if "seed" in entry else entry.get("dpdist"))
        return (_bytes(entry["token"]), _bytes(entry["seed"]) if "seed" in entry else None,
                None if sealed is None else _bytes(sealed))

    def seal(self, pin: str, report_id: str, sealed: bytes) -> None:
        """Keep the report's request bytes, encapsulated with its token's seed.  The caller saves (:meth:`save`) before
        the report leaves the device."""
        self._bound[f"{pin}:{report_id}"]["ohttp"] = _text(sealed)

    def acknowledged(self, pin: str, report_id: str) -> None:
        """The relay holds the report: its seed is forgotten (saved with the next :meth:`save`)."""
        self._bound.get(f"{pin}:{report_id}", {}).pop("seed", None)

    def drop(self, pin: str, report_id: str) -> None:
        """Forget the report's token (the relay refused it): a resend takes another."""
        if self._bound.pop(f"{pin}:{report_id}", None) is not None:
            self.save()

    def save(self) -> None:
        if self.path is None:
            return

        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with atomic_writer(self.path, private=True) as handle:
            handle.write(json.dumps({"version": _VERSION, "spare": self._spare, "bound": self._bound}).encode())


def _text(token: bytes) -> str:
    return base64.b64encode(token).decode("ascii")


def _bytes(text: str) -> bytes:
    return base64.b64decode(text)
