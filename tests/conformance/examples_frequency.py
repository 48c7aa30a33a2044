"""Small instances of the categorical protocols for the conformance suite.

OLH uses a small hash prime so that its channel over every (seed, value) pair
can be enumerated; FLH's channel has hash_count x g outputs whatever the
prime; CP uses a tiny matrix (its calibrated mechanism is exactly
epsilon-LDP whatever the column balance).
"""

EXAMPLES = {
    "grr": [
        {"epsilon": 1.0, "domain_size": 5},
        {"epsilon": 3.0, "domain_size": 2},
        {"epsilon": 1.0, "labels": ["home", "cart", "checkout", "help"]},  # a public label domain
    ],
    "oue": [{"epsilon": 1.0, "domain_size": 5}, {"epsilon": 2.5, "labels": ["a", "b", "c"]}],
    "sue": [{"epsilon": 1.0, "domain_size": 5}, {"epsilon": 2.5, "domain_size": 3}],
    "l-grr": [{"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}, {"epsilon": 4.0, "epsilon_1": 0.5, "domain_size": 2}],
    "l-osue": [{"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}, {"epsilon": 4.0, "epsilon_1": 3.5, "domain_size": 3}],
    "loloha": [
        {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5, "hash_prime": 7},
        {"epsilon": 4.0, "epsilon_1": 1.5, "domain_size": 4, "hash_prime": 5, "variant": "binary"},
    ],
    "dbitflippm": [
        {"epsilon": 1.0, "domain_size": 5, "sampled_bits": 2},
        {"epsilon": 3.0, "domain_size": 4},
        {"epsilon": 2.0, "domain_size": 6, "sampled_bits": 1},
    ],
    "olh": [
        {"epsilon": 1.0, "domain_size": 5, "hash_prime": 7},
        {"epsilon": 2.0, "domain_size": 4, "hash_prime": 5},
        {"epsilon": 0.5, "domain_size": 3, "hash_prime": 5, "hash_range": 2},
    ],
    "hr": [
        {"epsilon": 0.5, "domain_size": 5},
        {"epsilon": 3.0, "domain_size": 6},
        {"epsilon": 4.0, "domain_size": 20},
    ],
    "ss": [
        {"epsilon": 1.0, "domain_size": 5},
        {"epsilon": 0.2, "domain_size": 9},
        {"epsilon": 3.0, "domain_size": 4},
    ],
    "pgr": [
        {"epsilon": 1.0, "domain_size": 5},  # t = 2 (randomized response over the q + 1 points of a line)
        {"epsilon": 0.5, "domain_size": 10},  # q = 3, t = 3: 13 points, 3 of them outputs only
        {"epsilon": 2.0, "domain_size": 7, "field_size": 2},  # the Fano plane
    ],
    "flh": [
        {"epsilon": 1.0, "domain_size": 5, "hash_count": 6, "hash_prime": 7},
        {"epsilon": 2.0, "domain_size": 8, "hash_count": 40, "family_seed": 11},
        {"epsilon": 0.5, "domain_size": 4, "hash_count": 3, "hash_range": 2},
    ],
    "pem": [
        {"epsilon": 1.0, "bits": 4, "k": 2, "step": 1, "hash_count": 4},
        {"epsilon": 2.0, "alphabet": "ab", "max_chars": 2, "k": 1, "step": 2, "hash_count": 3, "family_seed": 5},
    ],
    "cms": [
        {"epsilon": 1.0, "domain_size": 5, "hash_count": 3, "width": 4, "hash_prime": 7},
        {"epsilon": 2.0, "domain_size": 8, "hash_count": 20, "width": 2, "family_seed": 3},
        {"epsilon": 0.5, "domain_size": 3, "hash_count": 2, "width": 4},
    ],
    "hcms": [
        {"epsilon": 1.0, "domain_size": 5, "hash_count": 3, "width": 4, "hash_prime": 7},
        {"epsilon": 2.0, "domain_size": 8, "hash_count": 20, "width": 8, "family_seed": 3},
        {"epsilon": 0.5, "domain_size": 3, "hash_count": 2, "width": 2},
    ],
    "cp": [
        {"epsilon": 1.0, "domain_size": 6, "measurements": 8, "matrix_seed": 3},
        {"epsilon": 2.0, "domain_size": 5, "measurements": 6, "regime": "medium"},
    ],
}

#: the example (its index above) on which the fast loop runs the non-privacy checks: the lightest, measured
#: (conftest.py); a protocol not named here: its first example
LIGHTEST = {"cms": 2, "dbitflippm": 2, "hr": 1, "l-grr": 1, "l-osue": 1}
