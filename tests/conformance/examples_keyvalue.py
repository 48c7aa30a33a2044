"""Small instances of the key-value protocols (sets of (key, value) pairs; design.md, "Adding a protocol")."""

EXAMPLES = {
    "privkv": [{"epsilon": 1.0, "domain_size": 3}, {"epsilon": 3.0, "domain_size": 2}],
    "pckv-ue": [{"epsilon": 1.0, "domain_size": 3, "padding_length": 2}, {"epsilon": 2.0, "domain_size": 2}],
    "pckv-grr": [{"epsilon": 1.0, "domain_size": 3, "padding_length": 2}, {"epsilon": 3.0, "domain_size": 4}],
}

#: the example (its index above) on which the fast loop runs the non-privacy checks: the lightest, measured
#: (conftest.py); a protocol not named here: its first example
LIGHTEST = {"privkv": 1, "pckv-ue": 1}
