"""trasgoDP 2.1.0 (PyPI ``trasgodp``, "Local differential privacy mechanisms"), run in its own environment.

Its mechanisms randomize a whole column: the k-ary and binary randomized responses and the exponential
mechanism take their categories from ``np.unique`` of the column (audited in whole-column mode, datasets one
per row); the Laplace and Gaussian mechanisms take public clipping bounds, so each record's output depends on it
alone (audited per value).  Categories must be strings: items ``i`` are written ``"c{i}"`` and read back.
"""

import importlib.metadata

import numpy as np
from trasgodp import categorical, numerical

VERSION = importlib.metadata.version("trasgodp")


def _as_categories(values):
    return np.array([f"c{int(v)}" for v in np.asarray(values).ravel()]).reshape(np.shape(values))


def _as_items(categories):
    return np.array([int(str(c)[1:]) for c in np.asarray(categories).ravel()]).reshape(np.shape(categories))


def build(case, epsilon=1.0, **params):
    about = {"version": VERSION, "claim": epsilon, "library": "trasgoDP"}
    if case in ("k-ary randomized response", "exponential mechanism"):
        mechanism = (categorical.dp_randomized_response_kary_array if case.startswith("k-ary")
                     else categorical.dp_exponential_array)

        def sample(columns):  # one column per row (whole-column mode)
            return np.stack([_as_items(mechanism(_as_categories(column), epsilon)) for column in columns])

        return sample, {**about, "name": f"trasgodp {case} (categories from the column)", "mode": "column"}
    if case in ("clip Laplace", "clip Gaussian"):
        low, high = params.get("bounds", (0.0, 1.0))
        delta = params.get("delta", 1e-3)

        def sample(values):
            values = np.asarray(values, dtype=np.float64)
            if case == "clip Laplace":
                return numerical.dp_clip_laplace_array(values, epsilon, low, high)
            return numerical.dp_clip_gaussian_array(values, epsilon, low, high, delta=delta)

        return sample, {**about, "name": f"trasgodp {case} [{low:g}, {high:g}]", "domain": [low, high],
                        "delta": 0.0 if case == "clip Laplace" else delta}
    raise KeyError(case)
