"""Small instances of rws (random wheel spinner) for the conformance suite: a prime d (the wheel is the
domain), d below a prime (positions without an item), k = 1 (GRR) and k > 2."""

EXAMPLES = {
    "rws": [
        {"epsilon": 1.0, "domain_size": 5},
        {"epsilon": 0.5, "domain_size": 6},
        {"epsilon": 3.0, "domain_size": 4},
        {"epsilon": 0.2, "domain_size": 10},
    ]
}
