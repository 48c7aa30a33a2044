"""The fast loop runs every privacy check on every example, every other check on the lightest example of each protocol.

``test_protocol_conforms`` runs each check its tags call for on every example of every registered protocol
(``_examples.py``); the full suite runs all of them.  Under ``-m "not slow"``:

- the privacy checks (:data:`EVERY_EXAMPLE`: the exact epsilon checks of the channel, of the reports over time and of
  each attribute) run on every example;
- the other checks (round trips, refusals, report formats, the guarantee an estimate carries, seeds and the secure
  generator, merging, the chi-square samplers) run on the lightest example of each protocol
  (``_examples.lightest_cases``), the same assertions at the same size;
- the bias/variance check and the simulate-vs-privatize check (:data:`SHRUNK`) run on the lightest example with a
  quarter of the repeats (``test_conformance.py::test_repeated_estimates_at_a_quarter_of_the_repeats``: the same
  Bonferroni-corrected bounds, computed from the analytic variance at that number of repeats).
"""

from __future__ import annotations

import pytest

from dpdist.testing import check_id

from ._examples import lightest_cases, make

#: repeated estimates whose fast-loop version is a separate test at a quarter of the repeats
SHRUNK = {
    "check_unbiased_with_the_analytic_variance",
    "check_simulate_matches_privatize",
}
#: the privacy (epsilon) checks: on every example in the fast loop too
EVERY_EXAMPLE = {
    "check_channel_is_epsilon_ldp",
    "check_reports_over_time",
    "check_attribute_guarantee",
}

_LIGHTEST_IDS = {check_id(make(case)) for case in lightest_cases()}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.originalname != "test_protocol_conforms" or "check" not in params:
            continue
        check = params["check"].__name__
        if check in SHRUNK or (check not in EVERY_EXAMPLE and check_id(params["protocol"]) not in _LIGHTEST_IDS):
            item.add_marker(pytest.mark.slow)
