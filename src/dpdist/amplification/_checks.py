"""The arguments every bound takes, checked once with errors that name them."""

from __future__ import annotations

from .._validation import InstanceOf, Integer, OneOf, check_param
from ..errors import InvalidPrivacyParameterError
from ..local import LocalProtocol, from_config

__all__ = ["check_delta", "check_epsilon0", "check_n", "check_protocol", "PROTOCOL"]


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


#: the local protocol whose reports are shuffled: a protocol object, or its config (a dict, as ``config()`` gives);
#: its name alone is refused, since its epsilon and domain decide the guarantee
PROTOCOL = OneOf((InstanceOf(LocalProtocol, "a local protocol"), InstanceOf(dict, "its config")),
                 "a local protocol (dpdist.local.make(name, epsilon=..., ...): a name alone is not enough, its epsilon "
                 "and domain decide the guarantee) or its config (a dict)")


def check_protocol(protocol: LocalProtocol | dict) -> LocalProtocol:
    """The local protocol of ``protocol`` (one that passed :data:`PROTOCOL`): itself, or the one its config makes."""
    return protocol if isinstance(protocol, LocalProtocol) else from_config(protocol)
