"""diffprivlib 0.6.6 (IBM), its mechanisms used as local randomizers of one value, in its own environment.

Each mechanism's ``randomise(value)`` per Python call; diffprivlib draws from NumPy's global generator unless
given a ``random_state``, so the worker's seeding repeats an audit."""

import importlib.metadata

import numpy as np
from diffprivlib import mechanisms

VERSION = importlib.metadata.version("diffprivlib")


def build(case, epsilon=1.0, d=8, **params):
    about = {"version": VERSION, "claim": epsilon, "library": "diffprivlib"}
    real = {"domain": [0.0, 1.0]}
    if case == "Binary":
        mechanism = mechanisms.Binary(epsilon=epsilon, value0="0", value1="1")
        convert, about = (lambda v: str(int(v))), {**about, "domain": 2}
        back = int
    elif case == "GeometricTruncated":
        mechanism = mechanisms.GeometricTruncated(epsilon=epsilon, sensitivity=d - 1, lower=0, upper=d - 1)
        convert, back, about = int, int, {**about, "domain": d}
    elif case == "Geometric":
        mechanism = mechanisms.Geometric(epsilon=epsilon, sensitivity=d - 1)
        convert, back, about = int, int, {**about, "domain": d}
    elif case == "ExponentialCategorical":
        names = [str(i) for i in range(d)]
        utility = [[a, b, 0.0 if a == b else 1.0] for a in names for b in names if a <= b]
        mechanism = mechanisms.ExponentialCategorical(epsilon=epsilon, utility_list=utility)
        convert, back, about = (lambda v: str(int(v))), int, {**about, "domain": d}
    elif case in ("Laplace", "LaplaceTruncated", "LaplaceBoundedDomain", "Snapping", "Staircase"):
        cls = getattr(mechanisms, case)
        bounded = {"lower": 0.0, "upper": 1.0} if case in ("LaplaceTruncated", "LaplaceBoundedDomain", "Snapping") else {}
        mechanism = cls(epsilon=epsilon, sensitivity=1.0, **bounded)
        convert, back, about = float, float, {**about, **real}
    elif case in ("Gaussian", "GaussianAnalytic"):
        delta = params.get("delta", 1e-5)
        mechanism = getattr(mechanisms, case)(epsilon=epsilon, delta=delta, sensitivity=1.0)
        convert, back, about = float, float, {**about, **real, "delta": delta}
    elif case == "GaussianDiscrete":
        delta = params.get("delta", 1e-5)
        mechanism = mechanisms.GaussianDiscrete(epsilon=epsilon, delta=delta, sensitivity=d - 1)
        convert, back, about = int, int, {**about, "domain": d, "delta": delta}
    else:
        raise KeyError(case)

    def sample(values):
        return np.array([back(mechanism.randomise(convert(v))) for v in np.asarray(values).ravel().tolist()])

    return sample, {**about, "name": f"diffprivlib {case}"}
