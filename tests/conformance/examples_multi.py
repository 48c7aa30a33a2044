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
