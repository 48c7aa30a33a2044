"""The fast loop runs every check of every protocol; the repeated statistical checks of further examples are slow.

``test_protocol_conforms`` runs each check its tags call for on every example of every registered protocol
(``_examples.py``).  The statistical checks below draw hundreds of repeated estimates (0.1-1.6 CPU-s each, 12
CPU-s over all the examples); under ``-m "not slow"`` each runs on the *last* example of each protocol (8.1
CPU-s, against 9.8 on the first), on the others in the full suite.  Every exact check (epsilon, over time, the
attribute guarantee) and every other check runs on every example in both.
"""

from __future__ import annotations

import pytest

#: checks that repeat privatize/simulate + estimate hundreds of times (``dpdist.testing._statistics``)
REPEATED = {
    "check_unbiased_with_the_analytic_variance",
    "check_simulate_matches_privatize",
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
        if key[1] in REPEATED and key in seen:
            item.add_marker(pytest.mark.slow)
        seen.add(key)
