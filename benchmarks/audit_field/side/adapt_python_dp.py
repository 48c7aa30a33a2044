"""python-dp 1.1.5 (Google's differential privacy library, PyPI ``python-dp``), in its own environment.

Its numerical mechanisms add noise to one value (``add_noise``, a C++ call each; Google's library draws from its
own secure generator: not seedable); ``QuantileTree`` and ``Count`` release from a dataset (central, one dataset
per row)."""

import importlib.metadata

import numpy as np
from pydp.algorithms.laplacian import BoundedSum, Count
from pydp.algorithms.numerical_mechanisms import GaussianMechanism, LaplaceMechanism
from pydp.algorithms.quantile_tree import QuantileTree

VERSION = importlib.metadata.version("python-dp")


def build(case, epsilon=1.0, **params):
    about = {"version": VERSION, "claim": epsilon, "library": "python-dp", "seeded": False}
    if case in ("LaplaceMechanism", "GaussianMechanism"):
        delta = params.get("delta", 1e-5)
        mechanism = (LaplaceMechanism(epsilon=epsilon, sensitivity=1.0) if case == "LaplaceMechanism"
                     else GaussianMechanism(epsilon=epsilon, delta=delta, sensitivity=1.0))

        def sample(values):
            return np.array([mechanism.add_noise(float(v)) for v in np.asarray(values, dtype=np.float64).ravel()])

        return sample, {**about, "name": f"python-dp {case}", "domain": [0.0, 1.0],
                        "delta": 0.0 if case == "LaplaceMechanism" else delta}
    if case == "QuantileTree":
        height, branching = params.get("height", 4), params.get("branching", 16)
        quantiles = [0.1, 0.25, 0.5, 0.75, 0.9]

        def sample(datasets):
            out = []
            for data in datasets:
                data = np.asarray(data, dtype=np.float64)
                tree = QuantileTree(0.0, 1.0, height, branching)
                for value in data[~np.isnan(data)].tolist():  # a batch pads shorter datasets with NaN
                    tree.add_entry(value)
                out.append(tree.compute_quantiles(epsilon, 0.0, 1, 1, quantiles))
            return np.asarray(out)

        return sample, {**about, "name": f"python-dp QuantileTree h={height} b={branching}", "mode": "central"}
    if case in ("Count", "BoundedSum"):
        def sample(datasets):
            out = []
            for data in datasets:
                algorithm = Count(epsilon=epsilon, dtype="float") if case == "Count" else \
                    BoundedSum(epsilon=epsilon, lower_bound=0.0, upper_bound=1.0, dtype="float")
                data = np.asarray(data, dtype=np.float64)
                out.append(algorithm.quick_result(data[~np.isnan(data)].tolist()))
            return np.asarray(out, dtype=np.float64)

        return sample, {**about, "name": f"python-dp {case}", "mode": "central"}
    raise KeyError(case)


def quantiles_of(data, epsilon, bounds, height, branching, quantiles):
    """python-dp's ``QuantileTree.compute_quantiles`` of one dataset (one record per person: add or remove one)."""
    tree = QuantileTree(float(bounds[0]), float(bounds[1]), int(height), int(branching))
    for value in np.asarray(data, dtype=np.float64).tolist():
        tree.add_entry(value)
    return tree.compute_quantiles(float(epsilon), 0.0, 1, 1, list(quantiles))
