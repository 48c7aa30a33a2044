"""The arguments every bound takes, checked once with errors that name them."""

from __future__ import annotations

from .._validation import Integer, check_param
from ..errors import InvalidParameterError, InvalidPrivacyParameterError

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


def check_protocol(owner: str, protocol):
    """The local protocol whose reports are shuffled (an object of ``dpdist.local``; checked by what the accounting
    reads, so that this module does not import the protocols' package).

    A protocol's name or config alone is refused: its epsilon and domain decide the guarantee, and
    ``dpdist.local.make`` / ``from_config`` build it.
    """
    if all(hasattr(protocol, name) for name in ("guarantee", "tags", "channel", "config")) and not isinstance(protocol, type):
        return protocol
    hint = ""
    if isinstance(protocol, str):
        hint = (f" A name is not enough (its epsilon and domain decide the guarantee): pass "
                f"dpdist.local.make({protocol!r}, epsilon=..., ...).")
    elif isinstance(protocol, dict):
        hint = " For a config, pass dpdist.local.from_config(config)."
    raise InvalidParameterError(
        f"The 'protocol' argument of {owner} must be a local protocol (dpdist.local.make(...)). "
        f"Got {protocol!r:.100} instead.{hint}"
    )
