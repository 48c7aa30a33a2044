"""Small instances of ocms (OCMS+RR, Pan, CSF 2025) for the conformance suite: small primes so that
``channel()`` enumerates every (hash function, value) output and the exact epsilon is checked."""

EXAMPLES = {
    "ocms": [
        {"epsilon": 1.0, "domain_size": 5, "hash_prime": 7},  # worst case, f* = 1: m = round(1 + e^0.5) = 3
        {"epsilon": 3.0, "domain_size": 4, "hash_prime": 11, "objective": "l2"},  # m = 8
        {"epsilon": 2.0, "domain_size": 5, "hash_prime": 7, "max_frequency": 0.2},  # f* = 0.2 = 1/d: m = 5
    ],
}
