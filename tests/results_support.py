"""Real results of every class that writes a JSON document (``to_dict``), small and seeded, for the tests of reading
them back (tests/test_documents.py): each made the way a user makes it, not built field by field."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Any, Callable

import numpy as np

import dpdist
from source_support import package_trees

SOURCE = Path(dpdist.__file__).parent

_X = np.random.default_rng(0).beta(2, 5, size=1500)


def _frequency():
    protocol = dpdist.local.make("oue", epsilon=2.0, domain_size=6)
    return protocol.estimate(protocol.simulate(np.random.default_rng(1).integers(0, 6, 1500), rng=2), postprocess="norm-sub")


def _labelled_cp():
    protocol = dpdist.local.make("cp", epsilon=2.0, labels=["snow", "rain", "sun", "fog", "wind", "hail"], measurements=4)
    return protocol.estimate(protocol.simulate(np.random.default_rng(1).integers(0, 6, 1500), rng=2))


def _banded():
    from dpdist.uncertainty import cdf_band

    protocol = dpdist.local.make("hh", epsilon=2.0, bins=16)
    return cdf_band(protocol, protocol.simulate(_X, rng=3), replicates=20, rng=4)


def _mean():
    protocol = dpdist.local.make("pm", epsilon=1.0)
    return protocol.estimate(protocol.simulate(_X, rng=1))


def _mean_variance():
    from dpdist.estimates import MeanVarianceEstimate

    protocol = dpdist.local.make("pm", epsilon=1.0)
    mean = protocol.estimate(protocol.simulate(_X[:700], rng=1))
    deviation = protocol.deviation_protocol(mean.mean)
    spread = deviation.estimate(deviation.simulate((_X[700:] - mean.mean) ** 2, rng=2))
    return MeanVarianceEstimate(mean.mean, spread.mean, mean.mean, mean, spread)


def _heavy_hitters():
    words = ["apple"] * 1500 + ["pear"] * 1000 + [f"w{'abcdefghij'[i % 10]}x" for i in range(1500)]
    return dpdist.local.heavy_hitters(words, 6.0, k=2, max_chars=5, alphabet="abcdefghijklmnopqrstuvwxyz", rng=2)


def _ranges():
    from dpdist.local.multi.pripl import pripl_ranges

    rng = np.random.default_rng(1)
    records = {"x": rng.beta(2, 5, 3000), "y": rng.random(3000)}
    return pripl_ranges(records, epsilon=2.0, attributes=[{"name": name, "bounds": [0, 1]} for name in records],
                        rng=2, resolution=8)


def _key_value():
    from dpdist.local.keyvalue import KeyValueSets

    rng = np.random.default_rng(1)
    protocol = dpdist.local.make("pckv-ue", epsilon=2.0, domain_size=4)
    return protocol.estimate(protocol.simulate(KeyValueSets(rng.integers(0, 4, 1500), rng.uniform(-1, 1, 1500),
                                                            np.ones(1500, int)), rng=2))


def _multi():
    attributes = [{"name": "colour", "labels": ["red", "green", "blue"]}, {"name": "age", "bounds": [0, 1], "protocol": "pm"}]
    protocol = dpdist.local.make("spl", epsilon=3.0, attributes=attributes)
    rng = np.random.default_rng(1)
    return protocol.estimate(protocol.simulate({"colour": rng.integers(0, 3, 1500), "age": _X}, rng=2))


def _marginals():
    attributes = [{"name": "a", "domain_size": 3}, {"name": "b", "labels": ["x", "y"]}]
    protocol = dpdist.local.make("calm", epsilon=2.0, attributes=attributes)
    return protocol.estimate(protocol.simulate(np.random.default_rng(1).integers(0, 2, (1500, 2)), rng=2))


def _grids():
    protocol = dpdist.local.make("hdg", epsilon=2.0, attributes=[{"name": "x", "bounds": [0, 1]},
                                                                 {"name": "y", "bounds": [0, 1]}], g1=8, g2=4)
    rng = np.random.default_rng(1)
    return protocol.estimate(protocol.simulate({"x": rng.random(2000), "y": rng.random(2000)}, rng=2))


def _sequence(name: str, **options):
    from dpdist.confidence_sequences import confidence_sequence

    protocol = dpdist.local.make(name, **options)
    values = np.random.default_rng(1).integers(0, 4, 1500) if name == "grr" else _X
    return confidence_sequence(protocol, protocol.simulate(values, rng=2), level=0.9, target_n=10**5)


def _explanation():
    from dpdist.accuracy import explain

    return explain("oue", n=2000, epsilons=[0.5, 2.0], domain_size=8, cache=None)


def _shuffled():
    from dpdist.amplification import account

    return account(dpdist.local.make("grr", epsilon=2.0, domain_size=4), 1000, 1e-6)


def _audit():
    from dpdist.audit import audit

    return audit(dpdist.local.make("grr", epsilon=1.0, domain_size=3), samples=4000, rng=1)


def _losses():
    from dpdist import accounting

    grr = accounting.protocol_loss(dpdist.local.make("grr", epsilon=1.0, domain_size=4))
    oue = accounting.protocol_loss(dpdist.local.make("oue", epsilon=1.0, domain_size=4))
    gaussian = accounting.gaussian(2.0, delta=1e-6)
    return [grr, accounting.sequential([grr, grr, oue]), gaussian, accounting.parallel([grr, oue])]


def _guarantees():
    from dpdist.privacy import PrivacyGuarantee

    return [PrivacyGuarantee(1.0), PrivacyGuarantee(0.5, 1e-6, "add-remove", "central"),
            PrivacyGuarantee(2.0, 0.0, "history", "local", 4),
            PrivacyGuarantee(1.5, 1e-7, "add-remove", "central", unit="person")]


def _quiet(call):
    """``call()`` without its warnings (a release per person tells its caller how many rows it left out)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


#: Real results of each class, by class name: ``name -> (reader, makers)``; the reader is what reads the class's
#: documents back (its own ``from_dict``, or, for a release presented as the distribution it releases, that
#: distribution's).
def _readers() -> dict[str, tuple[Callable[[Any], Any], list[Callable[[], Any]]]]:
    from dpdist.accuracy import Expected, Explanation, Prediction
    from dpdist.amplification._accounting import ShuffledAccount
    from dpdist.audit import AuditResult
    from dpdist.confidence_sequences._results import CDFSequence, FrequencySequence, MeanSequence, StopReadout
    from dpdist.estimates import (CDFBand, CountRelease, Distribution, FrequencyEstimate, HeavyHitters, Interval,
                                  MeanEstimate, MeanVarianceEstimate, QuantileRelease, RangeEstimate, ScalarRelease)
    from dpdist.local.keyvalue import KeyValueEstimate
    from dpdist.local.multi import MultiAttributeEstimate
    from dpdist import accounting
    from dpdist.accounting import PrivacyLoss, Statement
    from dpdist.accounting._distributions import loss_from_dict
    from dpdist.amplification import ShuffledGuarantee
    from dpdist.privacy import PrivacyGuarantee

    central = dpdist.central
    return {
        "PrivacyGuarantee": (PrivacyGuarantee.from_dict, [lambda k=k: _guarantees()[k] for k in range(4)]),
        "ShuffledGuarantee": (ShuffledGuarantee.from_dict, [
            lambda: dpdist.privacy.shuffled(dpdist.local.make("grr", epsilon=4.0, domain_size=8), n=1000, delta=1e-8)]),
        "Interval": (Interval.from_dict, [lambda: _frequency().intervals(0.9)[0], lambda: _mean().intervals()[0],
                                          lambda: _sequence("grr", epsilon=0.5, domain_size=4).intervals()[1]]),
        "CDFBand": (CDFBand.from_dict, [lambda: _banded().band]),
        "Distribution": (Distribution.from_dict, [_banded, lambda: central.histogram_queries(_X, 1.0, (0, 1), 8, rng=0)]),
        "TreeHistogram": (Distribution.from_dict, [lambda: central.TreeHistogram.release(_X, 1.0, (0, 1), branching=4, height=2, rng=0)]),
        "PolynomialMoments": (Distribution.from_dict,
                              [lambda: central.PolynomialMoments.release(_X, 1.0, 1e-6, (0, 1), 4, rng=0)]),
        "FrequencyEstimate": (FrequencyEstimate.from_dict, [_frequency, _labelled_cp]),
        "HeavyHitters": (HeavyHitters.from_dict, [_heavy_hitters]),
        "MeanEstimate": (MeanEstimate.from_dict, [_mean]),
        "MeanVarianceEstimate": (MeanVarianceEstimate.from_dict, [_mean_variance]),
        "QuantileRelease": (QuantileRelease.from_dict, [
            lambda: central.quantiles(_X, [0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0),
            lambda: central.quantiles(_X, [0.5], epsilon=1.0, bounds=(0, 1), method="aq", rng=0)]),
        "RangeEstimate": (RangeEstimate.from_dict, [_ranges]),
        "CountRelease": (CountRelease.from_dict, [lambda: central.count(_X, 1.0, rng=0),
                                                  lambda: _quiet(lambda: central.count(
                                                      _X, 1.0, rng=0, privacy_id=np.arange(_X.size) % 7,
                                                      max_contributions=3))]),
        "ScalarRelease": (ScalarRelease.from_dict, [lambda: central.sum(_X, 1.0, (0, 1), rng=0),
                                                    lambda: central.mean(_X, 1.0, (0, 1), rng=0)]),
        "KeyValueEstimate": (KeyValueEstimate.from_dict, [_key_value]),
        "MultiAttributeEstimate": (MultiAttributeEstimate.from_dict, [_multi]),
        "StopReadout": (StopReadout.from_dict, [lambda: _sequence("grr", epsilon=1.0, domain_size=4).stop_readout(0.05)]),
        "FrequencySequence": (FrequencySequence.from_dict, [lambda: _sequence("grr", epsilon=1.0, domain_size=4)]),
        "MeanSequence": (MeanSequence.from_dict, [lambda: _sequence("pm", epsilon=1.0)]),
        "CDFSequence": (CDFSequence.from_dict, [lambda: _sequence("sw", epsilon=1.0, bins=8)]),
        "Expected": (Expected.from_dict, [lambda: next(iter(_explanation().predictions[0].errors.values()))]),
        "Prediction": (Prediction.from_dict, [lambda: _explanation().predictions[1]]),
        "Explanation": (Explanation.from_dict, [_explanation]),
        "ShuffledAccount": (ShuffledAccount.from_dict, [_shuffled]),
        "AuditResult": (AuditResult.from_dict, [_audit]),
        "PrivacyLoss": (PrivacyLoss.from_dict, [lambda k=k: _losses()[k] for k in range(4)]),
        "Statement": (Statement.from_dict, [lambda: accounting.state(_losses()[1], 1e-8, "pld"),
                                            lambda: accounting.state(_losses()[2], 1e-8, "zcdp")]),
        **{name: (loss_from_dict, [lambda name=name: _distribution_of(name)])
           for name in ("Atoms", "GaussianLoss", "Curve", "Composed")},
    }


def _distribution_of(name: str):
    """A real privacy loss distribution of the class ``name`` (a part of a PrivacyLoss's document)."""
    kinds = {type(loss.distribution).__name__: loss.distribution for loss in _losses()}
    return kinds[name]


#: Classes that write a document but are read back by no ``from_dict``, and why (the test checks each is still so).
NOT_READ_BACK = {
    "Aggregator": "a collector's state, not a result: its own reader refuses forged states (tests/local/"
                  "test_state_invariants.py)",
    "PrivacyLedger": "a device's ledger (a state): its own reader (tests/local/test_ledger.py)",
    "MemoizedClient": "a device's memo (a state): its own reader (tests/local/test_ledger.py)",
    "BucketMemoClient": "a device's memo (a state): its own reader (tests/local/frequency/test_loloha.py)",
    "Attribute": "an attribute of a protocol's config, checked by the config's constraints",
    "Estimate": "the result contract (a Protocol), not a class of results",
    "Presented": "the base of the estimates: Presented.from_dict reads a document of any kind",
    "ReleasedDistribution": "the base of releases presented as their distribution: Distribution.from_dict reads them",
    "MarginalsEstimate": "its JSON lists the reported marginals, not the noise model and consistency map its queries "
                         "need: from_dict refuses it by name (MarginalsEstimate.not_read_back)",
    "GridsEstimate": "a MarginalsEstimate (the same)",
    "FeasibilityTest": "a diagnostic inside a campaign's estimate: its JSON leaves out the fit (not read back)",
    "TopExcessTest": "a diagnostic inside a campaign's estimate: its JSON lists at most 20 items (not read back)",
    "Charge": "the budget file's reader (budget/_statement.py), being rewritten by the accountant branch",
    "BudgetStatement": "written inside a result's guarantee; read back as the release's own guarantee (budget "
                       "classes: the accountant branch)",
    "SessionGuarantee": "read back as the release's own PrivacyGuarantee (PrivacyGuarantee.from_dict)",
    "AssumingGuarantee": "a PrivacyGuarantee carrying what it assumes (a composition of shuffled guarantees): its "
                         "document is the plain guarantee's, read back by PrivacyGuarantee.from_dict, its assumptions "
                         "stated by its describe() and kept by a budget session's file, not by the document",
    "Spent": "a session's running total (the accountant branch): written in a BudgetStatement",
    "Plan": "explain --plan's table (the accountant branch): printed and written, not read back yet",
    "PlanRow": "a row of a Plan (the same)",
    "Ladder": "explain --ladder's table: printed and written, computed again from its public inputs, not read "
              "back",
    "LadderRow": "a row of a Ladder (the same)",
    "GuessOdds": "an attacker's odds shown beside a protocol, plan or ladder row (explain, the service's attacker "
                 "section): computed again from the protocol, its epsilon and the prior, not read back",
    "TradeOff": "the membership test's curve shown beside a guarantee (release, budget show, the service's attacker "
                "section): computed again from the guarantee, not read back",
    "PartyGuess": "a party's odds in a LadderRow (the same as the Ladder)",
}


@functools.cache
def readers() -> dict[str, tuple[Callable[[Any], Any], list[Callable[[], Any]]]]:
    return _readers()


@functools.cache
def real(name: str, index: int) -> Any:
    """Result ``index`` of class ``name``, made once for the session (each is seeded; no test changes one)."""
    return readers()[name][1][index]()


def writing_classes() -> set[str]:
    """Every class of ``src/dpdist`` that writes a document: it defines ``to_dict`` or ``_json_fields``, or inherits
    from one that does (read from the source, so a class of a module no test imports is found too)."""
    classes: dict[str, tuple[set[str], list[str]]] = {}
    for path, tree in package_trees().items():  # parsed once per session (tests/source_support.py)
        if "_clients_js" in path.parts:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                methods = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
                bases = [re.sub(r"\[.*", "", ast.unparse(base)).split(".")[-1] for base in node.bases]
                classes[node.name] = (methods, bases)
    found = {name for name, (methods, _) in classes.items() if methods & {"to_dict", "_json_fields"}}
    while True:
        more = {name for name, (_, bases) in classes.items() if name not in found and set(bases) & found}
        if not more:
            return found
        found |= more
