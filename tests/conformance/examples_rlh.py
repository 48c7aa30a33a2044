"""Small instances of rlh (re-optimized local hashing) for the conformance suite: a small hash prime, so that
the channel over every (seed, value) pair can be enumerated."""

EXAMPLES = {
    "rlh": [
        {"epsilon": 1.0, "domain_size": 5, "hash_prime": 7},
        {"epsilon": 3.0, "domain_size": 4, "hash_prime": 5},  # g = 8 (OLH's would be 21)
        {"epsilon": 0.5, "domain_size": 2, "hash_prime": 3},
    ]
}
