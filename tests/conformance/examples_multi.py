"""Small instances of the multi-attribute protocols (records of categorical and numerical attributes)."""

_MIXED = [
    {"name": "colour", "labels": ["red", "green", "blue"], "protocol": "grr"},
    {"name": "size", "domain_size": 2, "protocol": "oue"},
    {"name": "age", "bounds": [0.0, 10.0], "protocol": "pm", "options": {"grid": 4}},
]
_CATEGORICAL = [
    {"name": "a", "domain_size": 3},
    {"name": "b", "domain_size": 2, "protocol": "oue"},
    {"name": "c", "domain_size": 4, "protocol": "olh", "options": {"hash_prime": 5}},
]

EXAMPLES = {
    "spl": [
        {"epsilon": 2.0, "attributes": _CATEGORICAL},
        {"epsilon": 1.0, "attributes": _MIXED},
    ],
}
EXAMPLES["smp"] = [
    {"epsilon": 1.0, "attributes": _CATEGORICAL},
    {"epsilon": 2.0, "attributes": _MIXED},
]
EXAMPLES["rsfd"] = [
    {"epsilon": 1.0, "attributes": _CATEGORICAL},
    {"epsilon": 2.0, "attributes": [{"name": "x", "domain_size": 2, "protocol": "grr"}, {"name": "y", "domain_size": 5, "protocol": "grr"}]},
    {"epsilon": 1.5, "fake": "random", "attributes": [{"name": "x", "domain_size": 3, "protocol": "oue"}, {"name": "y", "domain_size": 2, "protocol": "sue"}]},
]
EXAMPLES["rsrfd"] = [
    {"epsilon": 1.0, "attributes": _CATEGORICAL[:2], "priors": [[0.2, 0.3, 0.5], None]},
    {
        "epsilon": 2.0,
        "attributes": [{"name": "x", "domain_size": 3, "protocol": "oue"}, {"name": "y", "domain_size": 2, "protocol": "grr"}],
        "priors": [[0.6, 0.3, 0.1], [0.9, 0.1]],
    },
    {"epsilon": 0.5, "attributes": [{"name": "x", "domain_size": 3, "protocol": "grr"}, {"name": "y", "domain_size": 2}],
     "priors": [[0.5, 0.5, 0.0], None]},
]
EXAMPLES["calm"] = [
    {"epsilon": 1.0, "attributes": [{"name": "a", "domain_size": 3}, {"name": "b", "domain_size": 2}, {"name": "c", "domain_size": 2}]},
    {"epsilon": 2.0, "order": 1, "oracle": "oue", "attributes": [{"name": "a", "labels": ["x", "y", "z"]}, {"name": "b", "domain_size": 2}]},
    {"epsilon": 0.5, "order": 3, "attributes": [{"name": "a", "domain_size": 2}, {"name": "b", "domain_size": 2}, {"name": "c", "domain_size": 2}]},
]
EXAMPLES["hdg"] = [
    {"epsilon": 1.0, "resolution": 4, "g1": 2, "g2": 2,
     "attributes": [{"name": "x", "bounds": [0.0, 1.0]}, {"name": "y", "bounds": [-5.0, 5.0]}]},
    {"epsilon": 2.0, "resolution": 8, "g1": 2, "g2": 2, "hybrid": False,
     "attributes": [{"name": "x", "bounds": [0.0, 1.0]}, {"name": "y", "bounds": [0.0, 2.0]}, {"name": "z", "bounds": [0.0, 3.0]}]},
]

#: the example (its index above) on which the fast loop runs the non-privacy checks: the lightest, measured
#: (conftest.py); a protocol not named here: its first example
LIGHTEST = {"spl": 1, "smp": 1, "rsfd": 1, "rsrfd": 2, "calm": 1}
