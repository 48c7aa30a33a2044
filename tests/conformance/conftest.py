"""The fast loop runs every check of every protocol; the repeated statistical checks run smaller or on fewer examples.

``test_protocol_conforms`` runs each check its tags call for on every example of every registered protocol
(``_examples.py``).  The statistical checks below draw hundreds of repeated estimates; the full suite runs them at
their full size on every example.  Under ``-m "not slow"``:

- the bias/variance check and the simulate-vs-privatize check (:data:`SHRUNK`, 8 CPU-s on the last examples at
  full size) run on the *last* example of each protocol with a quarter of the repeats
  (``test_conformance.py::test_repeated_estimates_at_a_quarter_of_the_repeats``: the same Bonferroni-corrected
  bounds, computed from the analytic variance at that number of repeats);
- the two chi-square samplers' checks (:data:`LAST_EXAMPLE`, cheap) run at full size on the last example.

Every exact check (epsilon, over time, the attribute guarantee) and every other check runs on every example in both.
"""

from __future__ import annotations

import pytest

#: repeated estimates whose fast-loop version is a separate test at a quarter of the repeats
SHRUNK = {
    "check_unbiased_with_the_analytic_variance",
    "check_simulate_matches_privatize",
}
#: repeated draws that stay at full size in the fast loop, on the last example of each protocol
LAST_EXAMPLE = {
    "check_privatize_samples_the_channel",
    "check_privatize_samples_the_channel_with_a_32_bit_generator",
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seen: set[tuple[str, str]] = set()
    for item in reversed(items):  # the last example of each protocol stays in the fast loop
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.originalname != "test_protocol_conforms" or "check" not in params:
            continue
        key = (params["protocol"].name, params["check"].__name__)
        if key[1] in SHRUNK or (key[1] in LAST_EXAMPLE and key in seen):
            item.add_marker(pytest.mark.slow)
        seen.add(key)
