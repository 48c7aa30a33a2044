"""``dpdist demo``: every registered protocol on an embedded dataset (:func:`run_demo`), and the collection path
in one command (:func:`run_campaign_demo`, ``dpdist demo --campaign``: it needs ``dpdist[serve]``).

Both use the departure times of day of 100,000 flights from New York City in 2013
(:func:`load_departure_minutes`).  The package sits above the library and the service and below
the command line, which calls it.
"""

from ._campaign import CAMPAIGN, LABELS, run_campaign_demo
from ._comparison import REPEATS, DemoRun, run_demo
from ._flights import BOUNDS, load_departure_minutes

__all__ = ["run_demo", "DemoRun", "REPEATS", "run_campaign_demo", "CAMPAIGN", "LABELS", "load_departure_minutes", "BOUNDS"]
