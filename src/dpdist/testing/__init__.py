"""A conformance kit for local-DP protocols: prove a protocol's epsilon and sampler.

dpdist runs these checks on every protocol it ships; a third party's protocol
(a :class:`~dpdist.local.LocalProtocol` subclass) can run the very same ones,
much as scikit-learn ships ``check_estimator``:

>>> from dpdist import local, testing
>>> testing.check_protocol(local.make("grr", epsilon=1.0, domain_size=3))  # doctest: +SKIP

or, in a pytest module, one test per (protocol, check):

.. code-block:: python

    from dpdist.testing import parametrize_with_checks

    @parametrize_with_checks([MyProtocol(epsilon=1.0, domain_size=4)])
    def test_my_protocol(protocol, check):
        check(protocol)

What is checked (see :func:`checks_for`): the exact epsilon-LDP of the channel
(``max_y max_{x,x'} P[x, y] / P[x', y] <= e^epsilon``) for protocols with a
finite channel; chi-square tests that ``privatize`` samples that channel, with a
64-bit and a 32-bit bit generator; unbiasedness and the analytic variance of the
frequency estimator; ``simulate`` against privatize + aggregate; merging in any
order; config and state round trips; and clear errors on bad parameters, values
and reports.  Use small instances: the channel checks enumerate every output.

Central releases per person (``privacy_id``, ``max_contributions``): :func:`check_release_bounds_persons`
reads any such release at a large epsilon with one person of many rows and with ``k`` of them (they must read
alike), and :func:`check_median_per_person_exactly` computes the exact law of the exponential-mechanism median
with and without a person of six rows, over every choice of rows the release's own bounding makes (the worst
log-ratio must be at most epsilon per person).  Both fail on a bounding of rows rather than persons.

The kit needs only numpy and scipy; pytest is imported by
:func:`parametrize_with_checks` alone, when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ._central import check_median_per_person_exactly, check_release_bounds_persons
from ._checks import *  # noqa: F403
from ._checks import Check, checks_for
from ._checks import __all__ as _check_names
from ._inputs import channel_inputs, population
from ._poisoning import expected_gain, maximal_gain_attack
from ._statistics import *  # noqa: F403
from ._statistics import __all__ as _statistics_names

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = [
    "check_protocol",
    "parametrize_with_checks",
    "checks_for",
    "check_id",
    "channel_inputs",
    "population",
    "maximal_gain_attack",
    "expected_gain",
    "check_release_bounds_persons",
    "check_median_per_person_exactly",
    *_check_names,
    *_statistics_names,
]


def check_protocol(protocol: LocalProtocol) -> None:
    """Run every check the protocol's tags call for; raise ``AssertionError`` at the first failure.

    Parameters
    ----------
    protocol : LocalProtocol
        A small instance (the privacy checks enumerate its channel; a few
        dozen outputs keep the run within seconds).

    Raises
    ------
    AssertionError
        Naming the failed check and what it found.
    """
    for check in checks_for(protocol):
        try:
            check(protocol)
        except AssertionError as failure:
            raise AssertionError(f"{check.__name__} failed for {protocol!r}: {failure}") from failure


def check_id(protocol: LocalProtocol, check: Check | None = None) -> str:
    """A readable test id: ``name[param=value,...]`` and the check's name."""
    params = ",".join(f"{key}={value}" for key, value in protocol.params.items())
    label = f"{protocol.name}[{params}]"
    return label if check is None else f"{label}-{check.__name__}"


def parametrize_with_checks(protocols: Iterable[LocalProtocol]) -> Any:
    """A ``pytest.mark.parametrize`` over ``(protocol, check)`` for every protocol and each of its checks.

    Parameters
    ----------
    protocols : iterable of LocalProtocol
        Small instances.

    Returns
    -------
    pytest.MarkDecorator
        For a test ``def test_x(protocol, check): check(protocol)``.
    """
    import pytest  # lazy: only parametrize_with_checks needs pytest; the kit itself does not

    cases = [
        pytest.param(protocol, check, id=check_id(protocol, check))
        for protocol in protocols
        for check in checks_for(protocol)
    ]
    return pytest.mark.parametrize("protocol, check", cases)
