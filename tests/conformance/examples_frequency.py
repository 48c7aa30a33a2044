"""Small instances of the categorical protocols for the conformance suite."""

EXAMPLES = {
    "grr": [{"epsilon": 1.0, "domain_size": 5}, {"epsilon": 3.0, "domain_size": 2}],
    "oue": [{"epsilon": 1.0, "domain_size": 5}, {"epsilon": 2.5, "domain_size": 3}],
}
