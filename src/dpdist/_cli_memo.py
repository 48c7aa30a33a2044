"""``--memo FILE``: one device's reports of a longitudinal protocol from the command line.

A longitudinal protocol (``l-grr``, ``l-osue``, ``loloha``, ``dbitflippm``) bounds
the leak of any number of rounds by :math:`\\varepsilon_\\infty` only if the
device reuses its permanent responses. ``dpdist privatize`` and ``dpdist
submit`` randomize each row as a different user; with ``--memo FILE`` every row
is a value of this one device, reported through the client state kept in FILE
(``MemoizedClient`` / ``BucketMemoClient`` JSON, the same the JavaScript client
keeps in ``localStorage``). The file is created on first use (with its missing
directories), readable by its owner only (its keys are the device's true values,
or their buckets), refused if it was
made for another config, locked while in use, and replaced atomically with the
new permanent responses *before* any report is written or sent: a run killed at
any moment never lets a report out whose permanent response the device forgot.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np

__all__ = ["is_longitudinal", "DeviceMemo", "open_device_memo"]

LONGITUDINAL = ("l-grr", "l-osue", "loloha", "dbitflippm")


def is_longitudinal(protocol) -> bool:
    """Whether ``protocol`` has a device client with a memo (the protocols of :data:`LONGITUDINAL`)."""
    return callable(getattr(protocol, "client", None))


class DeviceMemo:
    """One device's client state, read from and saved to ``path``.

    ``seeded`` runs (``dpdist privatize --seed``) mark the file ``"seeded": true``: its permanent
    responses are reproducible from a seed, so not secret, and a run drawing from the CSPRNG
    refuses it rather than let every later round leak through predictable permanent responses.
    """

    def __init__(self, path: Path, protocol, seeded: bool = False):
        self.path = path
        self.protocol = protocol
        self.client, was_seeded = _load_client(path, protocol)
        if was_seeded and not seeded:
            from .errors import IncompatibleStateError

            raise IncompatibleStateError(
                f"The '--memo' file {str(path)!r} was made by a run with --seed: its permanent responses can be "
                "re-drawn by anyone who knows the seed, so they protect nothing. A device reporting for real needs a "
                "memo made without --seed (use another file; a new memo spends a fresh epsilon_inf)."
            )
        self.seeded = seeded or was_seeded

    def reports(self, values: np.ndarray, rng) -> np.ndarray:
        """This device's reports of ``values`` (one per value), the memo saved before they are returned."""
        drawn = [self.client.report(value, rng) for value in np.asarray(values).tolist()]
        self.save()
        dtype = np.result_type(*drawn) if drawn else np.uint64
        return np.asarray(drawn, dtype=dtype)

    def save(self) -> None:
        from ._io._atomic import atomic_writer

        # private: the memo's keys are the values this device has held (l-grr, l-osue) or their buckets
        with atomic_writer(self.path, private=True) as handle:
            state = self.client.to_dict()
            if self.seeded:
                state["seeded"] = True
            handle.write(json.dumps(state, sort_keys=True).encode() + b"\n")


@contextlib.contextmanager
def open_device_memo(path: str | None, protocol, option: str = "--memo", seeded: bool = False):
    """The :class:`DeviceMemo` at ``path`` for ``protocol`` (locked while open), or ``None`` without a path.

    ``seeded``: the run draws from a seed (``--seed``), not the CSPRNG (see :class:`DeviceMemo`).
    """
    from ._io._atomic import exclusive_lock
    from .errors import InvalidParameterError

    if path is None:
        yield None
        return
    if not is_longitudinal(protocol):
        raise InvalidParameterError(
            f"The '{option}' option keeps a device's permanent responses for a longitudinal protocol "
            f"({', '.join(LONGITUDINAL)}). Got the protocol {protocol.name!r}, whose reports are not memoized."
        )
    # "created on first use": also its directory (e.g. ~/.dpdist), readable by its owner only
    Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with exclusive_lock(path, owner=option):
        yield DeviceMemo(Path(path), protocol, seeded)


def _load_client(path: Path, protocol):
    from . import _json
    from .errors import DPDistError, IncompatibleStateError

    if not path.exists():
        return protocol.client(), False
    try:
        state = _json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise IncompatibleStateError(f"The '--memo' file {str(path)!r} is not a device memo (JSON): {error}.") from None
    if not isinstance(state, dict) or not _made_for(state.get("config"), protocol):
        raise IncompatibleStateError(
            f"The '--memo' file {str(path)!r} was made for another config ({_short(state)}); this run's config is "
            f"{_canonical(protocol.config())}. A device keeps one memo per config: reusing it for another would be "
            "wrong, and starting a new one for the same values spends a fresh epsilon_inf."
        )
    seeded = state.pop("seeded", False)
    if not isinstance(seeded, bool):
        raise IncompatibleStateError(f"The '--memo' file {str(path)!r}: 'seeded' must be true or false. Got {seeded!r}.")
    try:
        client = type(protocol.client()).from_dict(state)
    except DPDistError as error:
        raise IncompatibleStateError(f"The '--memo' file {str(path)!r}: {error}") from None
    client.protocol = protocol
    return client, seeded


def _made_for(config, protocol) -> bool:
    """Whether ``config`` rebuilds ``protocol`` (JavaScript writes 4 where Python writes 4.0)."""
    from .errors import DPDistError
    from .local import from_config

    try:
        return from_config(config) == protocol
    except (DPDistError, TypeError, ValueError, KeyError):
        return False


def _canonical(config) -> str:
    return json.dumps(config, sort_keys=True, default=str)


def _short(state) -> str:
    text = _canonical(state.get("config") if isinstance(state, dict) else state)
    return text if len(text) <= 200 else text[:200] + "..."
