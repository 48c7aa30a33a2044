"""The arguments every bound takes, checked once with errors that name them."""

from __future__ import annotations

from .._validation import Integer, check_param
from ..errors import InvalidParameterError, InvalidPrivacyParameterError
from ..local import LocalProtocol, from_config

__all__ = ["check_delta", "check_epsilon0", "check_n", "check_protocol"]


def check_epsilon0(epsilon0) -> float:
    if isinstance(epsilon0, bool) or not isinstance(epsilon0, (int, float)) or not 0 < epsilon0 < 60:
        raise InvalidPrivacyParameterError(f"The 'epsilon0' parameter must be a float in (0, 60). Got {epsilon0!r} instead.")
    return float(epsilon0)


def check_delta(delta) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise InvalidPrivacyParameterError(f"The 'delta' parameter must be a float in (0, 1). Got {delta!r} instead.")
    return float(delta)


def check_n(n) -> int:
    return check_param("amplification", "n", n, Integer(low=2, high=10**12))


def check_protocol(owner: str, protocol) -> LocalProtocol:
    """The local protocol whose reports are shuffled: a protocol object, or its config (a dict, as ``config()`` gives).

    A protocol's name alone is refused: its epsilon and domain decide the guarantee.
    """
    if isinstance(protocol, LocalProtocol):
        return protocol
    if isinstance(protocol, dict):
        return from_config(protocol)
    hint = (f" A name is not enough (its epsilon and domain decide the guarantee): pass "
            f"dpdist.local.make({protocol!r}, epsilon=..., ...)." if isinstance(protocol, str) else "")
    raise InvalidParameterError(
        f"The 'protocol' argument of {owner} must be a local protocol (dpdist.local.make(...)) or its config (a dict). "
        f"Got {protocol!r:.100} instead.{hint}"
    )
