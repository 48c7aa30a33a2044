"""Private implementation of :mod:`dpdist.io`: report wire formats and durable aggregator state."""
