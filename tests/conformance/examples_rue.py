"""Small instances of rue (re-optimized unary encoding) for the conformance suite."""

EXAMPLES = {"rue": [{"epsilon": 1.0, "domain_size": 5}, {"epsilon": 2.5, "domain_size": 2}, {"epsilon": 0.5, "labels": ["a", "b", "c"]}]}
