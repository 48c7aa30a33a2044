"""Small instances of rue (re-optimized unary encoding) for the conformance suite."""

EXAMPLES = {"rue": [{"epsilon": 1.0, "domain_size": 5}, {"epsilon": 2.5, "domain_size": 2}, {"epsilon": 0.5, "labels": ["a", "b", "c"]}]}

#: the example (its index above) on which the fast loop runs the non-privacy checks: the lightest, measured
#: (conftest.py); a protocol not named here: its first example
LIGHTEST = {"rue": 1}
