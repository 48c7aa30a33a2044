"""The sentence a person reads before taking part (the clients' ``consentText``): the JavaScript and Java clients write
the same one over many settings (protocols, epsilons, domains, bins, a memo's two epsilons), each figure as Python
writes it (:func:`dpdist.accounting._odds.percent`), no figure an attacker reaches shown below its exact value nor a
unit of its third digit above it, and chance rounded to the nearest."""

from __future__ import annotations

import json
import math
import re
import subprocess
from decimal import Decimal

import numpy as np
import pytest

from dpdist import local
from dpdist.accounting import guess_bound
from dpdist.accounting._odds import _times, percent
from dpdist.errors import InvalidParameterError
from java_support import ROOT, classpath, java_registry, java_tools
from js_support import DRIVER as JS_DRIVER
from js_support import js_registry, node_path

pytestmark = pytest.mark.slow  # one node and one JVM over every setting

#: epsilons from tiny to large (their bounds land on every third digit), beside domains and bins of every size: a
#: domain of 20,000 has a chance below the clients' 1e-4, where the sentence speaks in multiples of a blind guess
EPSILONS = tuple(float(e) for e in np.round(np.geomspace(0.05, 9.0, 37), 6)) + (math.log(3.0), 1.0)
DOMAINS = (2, 3, 7, 8, 32, 100, 1000, 4096, 20_000)
BINS = (4, 8, 10)
MEMOS = ((0.5, 2.0), (1.0, 4.0), (0.7, 1.1))  # (epsilon_1, epsilon_inf)


def _settings() -> list[tuple[dict, int | None, tuple[float, ...]]]:
    """``(config, values, epsilons)``: each config a client implements, the number of values its sentence guesses
    among (None: a record's or a word's, checked by the two clients' agreement alone) and the epsilons of its figures."""
    supported = set(js_registry()["supported"]) & set(java_registry()["supported"])
    found = []
    for name in sorted(supported):
        names = set(local.parameter_names(name))
        grid = ([{"domain_size": d} for d in DOMAINS] if "domain_size" in names
                else [{"bounds": (0.0, 1.0), "bins": b} for b in BINS] if "bins" in names else [])
        for params in grid:
            for epsilon in EPSILONS[::3] if name != "grr" else EPSILONS:
                kwargs = dict(params, epsilon=epsilon)
                memos = [{}] if "epsilon_1" not in names else [{"epsilon_1": one, "epsilon": inf} for one, inf in MEMOS]
                for memo in memos:
                    try:
                        protocol = local.make(name, **{**kwargs, **memo})
                    except InvalidParameterError:
                        continue
                    if protocol.tags.kind not in ("frequency", "numerical"):
                        continue  # key-value pairs: no sentence
                    figures = ((protocol.guarantee_over(1).epsilon, protocol.stable_guarantee.epsilon)
                               if protocol.tags.memoized else (protocol.guarantee.epsilon,))
                    found.append((protocol.config(), params.get("domain_size", params.get("bins")), figures))
    found.append((local.make("pem", epsilon=2.0, bits=32).config(), None, ()))
    return found


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[list, list, list]:
    """The settings, and the sentences of the JavaScript client and of the Java client (one process each)."""
    settings = _settings()
    path = tmp_path_factory.mktemp("consent") / "configs.json"
    path.write_text(json.dumps([config for config, _, _ in settings]))
    node = subprocess.run([node_path(), str(JS_DRIVER), "consent", str(path)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert node.returncode == 0, node.stderr[-4000:]
    java = subprocess.run([java_tools()[1], "-cp", classpath(), "JavaConformanceDriver", "consent", str(path)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert java.returncode == 0, java.stderr[-4000:]
    return settings, json.loads(node.stdout), json.loads(java.stdout)


def test_the_javascript_and_java_clients_write_the_same_sentence(written):
    settings, node, java = written
    assert len(settings) > 500 and None not in node
    assert [n for n, j in zip(node, java) if n != j] == []
    grr = [(config, sentence) for (config, values, _), sentence in zip(settings, node)
           if config["protocol"] == "grr" and 1 / values >= 1e-4]
    from dpdist.accounting import guess_odds  # its sentence, for GRR, is the clients' (exact, in the same words)

    assert all(guess_odds(local.from_config(config)).sentence() == sentence for config, sentence in grr)


def _unit(shown: Decimal) -> Decimal:
    """One unit of the third significant digit of ``shown`` (or of its last, where more were needed below 100%)."""
    return max(Decimal(1).scaleb(shown.adjusted() - 2), Decimal(1).scaleb(shown.as_tuple().exponent))


def test_no_figure_an_attacker_reaches_is_shown_below_it(written):
    """Each attacker's figure is Python's, at or above the exact bound and within a unit of it; chance is rounded to
    the nearest; the multiple of a blind guess whatever the prior is rounded up."""
    settings, node, _ = written
    checked = 0
    for (config, values, epsilons), sentence in zip(settings, node):
        if values is None:
            continue
        chance = 1 / values
        figures = re.findall(r"(?:probability of|does not change,) (?:at most )?([0-9.,]+)(%| times that)", sentence)
        assert len(figures) == len(epsilons), sentence
        for (text, unit), epsilon in zip(figures, epsilons):
            exact = guess_bound(epsilon, chance=chance) * (100 if unit == "%" else values)
            shown = Decimal(text.replace(",", ""))
            assert exact * (1 - 1e-9) <= shown < Decimal(exact) + _unit(shown), (sentence, exact)
            if unit == "%" and len(epsilons) == 1:  # a memo's epsilons are derived in each language: to 1e-9 alike
                assert text + "%" == percent(guess_bound(epsilon, chance=chance), bound=True)
            checked += 1
        (times,) = re.findall(r"at most ([0-9.,]+) times a blind guess", sentence)
        assert len(epsilons) == 2 or times == _times(min(math.exp(epsilons[-1]), values)), sentence
        if chance >= 1e-4:
            assert f"against {percent(chance)} by chance" in sentence
    assert checked > 500

