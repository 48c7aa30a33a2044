"""Write ``fixtures/python.json``: what the JavaScript client's tests compare against.

Run from the repository root: ``uv run python clients/js/test/make_fixture.py``.
``tests/clients/test_js_client.py`` rebuilds it and fails if the committed file is stale.

The fixture holds, from the Python implementation:

- ``channels``: small instances of the client's protocols with their exact ``channel()``
  (frequency: every item; numerical: the conformance suite's inputs) and their derived sampling
  constants, which the JS client must reproduce exactly;
- ``derived``: the derived constants for many more configs (epsilon on "nice" values such as
  ln 3, where a last-bit difference of exp would change an integer design parameter);
- ``configs``: ``proto.config()`` of the cases here and of label domains, which the client must read
  back as they are;
- ``multi``: small instances of the protocols over records (``spl``, ``smp``, ``rsfd``, ``rsrfd``,
  ``calm``, ``hdg``): the client view Python publishes, input records and their exact ``channel()``;
- ``granularities``: HDG's guideline ``(g1, g2)`` over users, epsilons, attributes and resolutions;
- ``priors``: priors and the weights Python realizes them as (``quantize_prior``, RS+RFD's fake data);
- ``answers``: what the device clients read of an answer: the bytes of an acknowledgement and of a
  config or identity (``CONFIG_ANSWER_BYTES``), and the values and containers of JSON parsed (``dpdist._json.most_values_within``, ``values_upper_bound``);
- ``report_bound``: what bounds a report of a fetched config (``dpdist._wire._report_bound``): the two
  ceilings and, for the channel and multi-attribute cases and a few large domains, ``record_bytes`` of 1 and 7 reports
  and the statistic's bytes (``statistic_size`` x its dtype); the most bytes of a record header a service reads
  and ``header_bytes`` of GRR configs of ``n`` zero-padded labels around it;
- ``exp``: ``math.exp`` and the correctly rounded value (``decimal``) on inputs to check.

These are cases picked by hand (a protocol's regimes, constants at nice epsilons), so that the node
tests run on their own; nothing here lists which protocols the client implements.  Every protocol
of the client, one added later included, is compared with Python live, over the registry and its
conformance examples, by ``tests/clients/test_js_conformance.py`` (which asks node what the client implements).
"""

from __future__ import annotations

import json
import math
import random
import sys
from decimal import Decimal, getcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if "numpy" not in sys.modules:  # the test suite's numerics: the channels' last bits come from numpy's loops
    sys.path.insert(0, str(ROOT / "tests"))
    from pinned_numerics import pin_numerics

    pin_numerics()

import numpy as np  # noqa: E402
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "python.json"

CHANNEL_CASES = [
    ("grr", {"epsilon": 1.0, "domain_size": 5}),
    ("grr", {"epsilon": 3.0, "domain_size": 2}),
    ("oue", {"epsilon": 1.0, "domain_size": 5}),
    ("oue", {"epsilon": 2.5, "domain_size": 3}),
    ("sue", {"epsilon": 1.0, "domain_size": 5}),
    ("sue", {"epsilon": 2.5, "domain_size": 3}),
    ("olh", {"epsilon": 1.0, "domain_size": 5, "hash_prime": 7}),
    ("olh", {"epsilon": 2.0, "domain_size": 4, "hash_prime": 5}),
    ("olh", {"epsilon": 0.5, "domain_size": 3, "hash_prime": 5, "hash_range": 2}),
    ("hr", {"epsilon": 1.0, "domain_size": 5}),
    ("hr", {"epsilon": 3.0, "domain_size": 20}),
    ("hr", {"epsilon": 0.5, "domain_size": 6}),
    ("ss", {"epsilon": 0.5, "domain_size": 5}),
    ("ss", {"epsilon": 3.0, "domain_size": 6}),
    ("ss", {"epsilon": math.log(3), "domain_size": 8}),
    ("sw", {"epsilon": 1.0, "bins": 4, "output_bins": 6}),
    ("sw", {"epsilon": 2.0, "bins": 5, "discrete": True}),
    ("sw", {"epsilon": 0.5, "bins": 6, "discrete": True}),
    ("sw", {"epsilon": 0.5, "bins": 3, "output_bins": 7, "b": 0.3, "bounds": (-2.0, 3.0)}),
    ("sw", {"epsilon": 4.0, "bins": 16}),
    ("gw", {"epsilon": 1.0, "bins": 4, "output_bins": 6, "shape": "trapezoid", "ratio": 0.4}),
    ("gw", {"epsilon": 1.5, "bins": 3, "output_bins": 5, "shape": "triangle", "bounds": (10.0, 20.0)}),
    ("opm", {"epsilon": 1.0, "bins": 4}),
    ("opm", {"epsilon": 2.0, "bins": 6, "window": 0.4, "bounds": (-2.0, 3.0)}),
    ("opm-circular", {"epsilon": 1.0, "bins": 4}),
    ("opm-circular", {"epsilon": 0.5, "bins": 6, "window": 0.7, "bounds": (0.0, 1440.0)}),
    ("opm-circular", {"epsilon": 4.0, "bins": 16, "bounds": (-180.0, 180.0)}),
    ("pem", {"epsilon": 1.0, "bits": 4, "k": 2, "step": 1, "hash_count": 4}),
    ("pem", {"epsilon": 2.0, "alphabet": "ab", "max_chars": 2, "k": 1, "step": 2, "hash_count": 3, "family_seed": 5}),
    ("pem", {"epsilon": 0.5, "bits": 6, "k": 3, "hash_count": 5, "family_seed": 2**53 - 1}),
    ("l-grr", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}),
    ("l-grr", {"epsilon": 4.0, "epsilon_1": 0.5, "domain_size": 2}),
    ("l-osue", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}),
    ("l-osue", {"epsilon": 3.0, "epsilon_1": 0.7, "domain_size": 3}),
    ("loloha", {"epsilon": 3.0, "epsilon_1": 1.0, "domain_size": 5, "hash_prime": 7}),
    ("loloha", {"epsilon": 2.0, "epsilon_1": 0.5, "domain_size": 4, "hash_prime": 5, "variant": "binary"}),
    ("dbitflippm", {"epsilon": 2.0, "domain_size": 4, "sampled_bits": 2}),
    ("dbitflippm", {"epsilon": 1.0, "domain_size": 3, "sampled_bits": 1}),
    ("dbitflippm", {"epsilon": 3.0, "domain_size": 5}),
    ("cms", {"epsilon": 2.0, "domain_size": 5, "hash_count": 3, "width": 4, "hash_prime": 7, "family_seed": 3}),
    ("cms", {"epsilon": 1.0, "domain_size": 6, "hash_count": 2, "width": 8, "family_seed": 2**53 - 1}),
    ("hcms", {"epsilon": 1.0, "domain_size": 5, "hash_count": 3, "width": 4, "hash_prime": 7}),
    ("hcms", {"epsilon": 3.0, "domain_size": 9, "hash_count": 5, "width": 16, "family_seed": 12345}),
    ("threshold", {"epsilon": 1.0, "grid_size": 8, "cuts": [2, 5, 7]}),
    ("threshold", {"epsilon": 2.5, "grid_size": 16, "cuts": [9], "bounds": (-2.0, 3.0), "round": 3}),
]

_SCHEMA = [
    {"name": "a", "labels": ["x", "y", "z"], "protocol": "grr"},
    {"name": "b", "domain_size": 3, "protocol": "oue"},
    {"name": "age", "bounds": [0.0, 10.0], "protocol": "sw", "options": {"bins": 4, "output_bins": 6}},
]
_RECORDS = [["x", 0, 0.0], ["y", 2, 10.0], ["z", 1, 3.7], ["x", 2, 6.180339887498949]]
#: multi-attribute records: (protocol, params, input records); their exact channel() over those records
MULTI_CASES = [
    ("spl", {"epsilon": 2.0, "attributes": _SCHEMA}, _RECORDS),
    ("spl", {"epsilon": 1.0, "attributes": [{"name": "c", "domain_size": 2}, {"name": "d", "domain_size": 4}]},
     [[0, 0], [1, 3], [0, 2]]),
    ("smp", {"epsilon": 1.5, "attributes": _SCHEMA}, _RECORDS),
    ("spl", {"epsilon": 2.0, "attributes": [
        {"name": "hour", "bounds": [0.0, 1440.0], "protocol": "opm-circular", "options": {"bins": 6}},
        {"name": "level", "bounds": [0.0, 1.0], "protocol": "opm", "options": {"bins": 4}},
    ]}, [[0.0, 0.0], [1439.0, 1.0], [700.0, 0.3]]),
    ("smp", {"epsilon": 1.0, "attributes": [
        {"name": "c", "domain_size": 4, "protocol": "olh", "options": {"hash_prime": 5}},
        {"name": "d", "domain_size": 5, "protocol": "ss"},
    ]}, [[0, 0], [3, 4], [1, 2]]),
    ("rsfd", {"epsilon": 1.0, "attributes": [{"name": "c", "domain_size": 3}, {"name": "d", "domain_size": 3, "protocol": "oue"}]},
     [[0, 0], [2, 1], [1, 2]]),
    ("rsfd", {"epsilon": 1.5, "fake": "random", "attributes": [
        {"name": "c", "domain_size": 3, "protocol": "oue"},
        {"name": "d", "domain_size": 2, "protocol": "sue"},
        {"name": "e", "domain_size": 4, "protocol": "ss"},
    ]}, [[0, 0, 0], [2, 1, 3], [1, 0, 2]]),
    ("rsrfd", {"epsilon": 1.0, "priors": [[0.7, 0.2, 0.1], None], "attributes": [
        {"name": "c", "labels": ["x", "y", "z"], "protocol": "grr"},
        {"name": "d", "domain_size": 3, "protocol": "oue"},
    ]}, [["x", 0], ["z", 1], ["y", 2]]),
    ("rsrfd", {"epsilon": 1.5, "priors": [None, [0.0, 0.25, 0.75], [0.1, 0.2, 0.3, 0.4]], "attributes": [
        {"name": "c", "domain_size": 2, "protocol": "grr"},
        {"name": "d", "domain_size": 3, "protocol": "sue"},
        {"name": "e", "domain_size": 4, "protocol": "ss"},
    ]}, [[0, 0, 0], [1, 2, 3], [1, 1, 2]]),
    ("calm", {"epsilon": 1.0, "attributes": [
        {"name": "a", "labels": ["x", "y", "z"]}, {"name": "b", "domain_size": 2}, {"name": "c", "domain_size": 2},
    ]}, [["x", 0, 0], ["z", 1, 1], ["y", 0, 1]]),
    ("calm", {"epsilon": 2.0, "order": 1, "oracle": "oue", "attributes": [
        {"name": "a", "domain_size": 4}, {"name": "b", "domain_size": 3},
    ]}, [[0, 0], [3, 2], [1, 1]]),
    ("calm", {"epsilon": 0.5, "order": 2, "oracle": "sue", "attributes": [
        {"name": "a", "domain_size": 2}, {"name": "b", "domain_size": 2},
    ]}, [[0, 0], [1, 1], [0, 1]]),
    ("hdg", {"epsilon": 1.0, "resolution": 8, "g1": 4, "g2": 2, "attributes": [
        {"name": "x", "bounds": [0.0, 10.0]}, {"name": "y", "bounds": [-1.0, 1.0]},
    ]}, [[0.0, -1.0], [10.0, 1.0], [3.7, 0.1], [6.180339887498949, -0.5]]),
    ("hdg", {"epsilon": 2.0, "resolution": 4, "g2": 2, "hybrid": False, "oracle": "oue", "attributes": [
        {"name": "x", "bounds": [0.0, 1.0]}, {"name": "y", "bounds": [0.0, 1.0]}, {"name": "z", "bounds": [0.0, 1.0]},
    ]}, [[0.0, 0.5, 1.0], [0.49, 0.5, 0.51], [0.99, 0.25, 0.0]]),
]
#: priors whose realized weights (quantize_prior) the JS client must reproduce: sums off 1, tiny and zero
#: entries, long priors (numpy's pairwise summation past 8 and 128 entries)
PRIORS = [
    [0.5, 0.5], [1.0, 0.0], [0.7, 0.2, 0.1], [1.0 / 3] * 3, [0.1] * 10, [1e-12, 1.0 - 1e-12], [0.0, 0.25, 0.75],
    [0.3, 0.3, 0.4000004], [1.0] * 7,
]


#: configs with a public label domain (the client maps labels to items as Python's encode does)
LABEL_CASES = [
    ("grr", {"epsilon": 1.0, "labels": ["home", "cart", "checkout", "help"]}),
    ("oue", {"epsilon": 2.5, "labels": ["a", "b", "c"]}),
]


#: longitudinal memo cases: a Python device's memo after reporting VALUES, and round two's exact law
MEMO_CASES = [
    ("l-grr", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}),
    ("l-osue", {"epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 5}),
    ("loloha", {"epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 5}),
    ("dbitflippm", {"epsilon": 2.0, "domain_size": 6, "sampled_bits": 3}),
]
MEMO_VALUES = [1, 3, 3, 4]

#: words and large prefixes whose encodings / mixes the JS client must reproduce (BigInts as strings)
PEM_WORDS = ["apple", "a", "", "zzzzzzzzzzzz", "wikipedia", "abcdefghijklmnop", "mississippi"]
PEM_PREFIXES = [0, 1, 2**31 - 1, 2**31, 2**53 + 1, 2**60 - 1, 2**62 - 1, 123456789012345678]

#: epsilons at the top of the supported range (the grid thresholds near 1, PEM's capped hash range)
LARGE_EPSILONS = [8.5, 12.0, 17.0, 25.0, 30.0]

NICE_EPSILONS = sorted(
    {math.log(k) for k in range(2, 21)}
    | {math.log(k / 2) for k in range(3, 13)}
    | {math.log(k) / 2 for k in range(2, 11)}
    | {round(0.05 * i, 2) for i in range(1, 101)}
)


def derived(protocol) -> dict:
    """The sampling constants the JS client derives itself: the ``design`` of the protocol's client view."""
    return protocol.client_view()["design"]


def channel_inputs(protocol):
    if protocol.tags.takes_items:
        return list(range(protocol.domain_size))
    lo, hi = protocol.bounds
    return [lo + (hi - lo) * t for t in (0.0, 0.1, 0.25, 0.5, 0.6180339887498949, 0.75, 1.0)]


def build_fixture() -> dict:
    from dpdist import local

    channels = []
    for name, params in CHANNEL_CASES:
        protocol = local.make(name, **params)
        inputs = channel_inputs(protocol)
        channel = protocol.channel(inputs if protocol.tags.kind == "numerical" else None)
        channels.append(
            {"config": protocol.config(), "inputs": inputs, "channel": channel.tolist(), "derived": derived(protocol)}
        )
    derived_cases = []
    for epsilon in NICE_EPSILONS:
        for name, extra in (
            ("grr", {"domain_size": 100}),
            ("oue", {"domain_size": 1024}),
            ("sue", {"domain_size": 1024}),
            ("olh", {"domain_size": 1024}),
            ("hr", {"domain_size": 1024}),
            ("ss", {"domain_size": 8}),
            ("ss", {"domain_size": 1024}),
            ("sw", {}),
            ("sw", {"discrete": True, "bins": 256}),
            ("gw", {"bins": 64}),
            ("opm", {}),
            ("opm-circular", {"bins": 288}),
            ("pem", {"alphabet": "abcdefghijklmnopqrstuvwxyz", "k": 20}),
            ("l-grr", {"domain_size": 100, "epsilon_1": epsilon / 2}),
            ("l-osue", {"domain_size": 1024, "epsilon_1": epsilon / 3}),
            ("loloha", {"domain_size": 1024, "epsilon_1": epsilon / 2}),
            ("loloha", {"domain_size": 1024, "epsilon_1": epsilon / 4}),
            ("loloha", {"domain_size": 1024, "epsilon_1": epsilon * 0.9}),
            ("dbitflippm", {"domain_size": 64, "sampled_bits": 8}),
            ("cms", {"domain_size": 1000, "hash_count": 4, "width": 64}),
            ("hcms", {"domain_size": 1000, "hash_count": 4, "width": 64}),
            ("threshold", {"cuts": [100, 512, 900]}),
        ):
            try:
                protocol = local.make(name, epsilon=epsilon, **extra)
            except Exception:  # e.g. a discrete SW grid too large: not a derivation case
                continue
            derived_cases.append({"config": protocol.config(), "derived": derived(protocol)})
    for epsilon in LARGE_EPSILONS:
        for name, extra in (
            ("grr", {"domain_size": 2}),
            ("hr", {"domain_size": 64}),
            ("ss", {"domain_size": 8}),
            ("pem", {"alphabet": "abcdefghijklmnopqrstuvwxyz", "k": 20}),
            ("pem", {"bits": 16, "k": 4, "hash_count": 64}),
            ("l-grr", {"domain_size": 10, "epsilon_1": epsilon / 2}),
            ("loloha", {"domain_size": 100, "epsilon_1": epsilon * 0.9}),
            ("cms", {"domain_size": 1000, "hash_count": 4, "width": 64}),
            ("hcms", {"domain_size": 1000, "hash_count": 4, "width": 64}),
            ("sw", {"bins": 64}),
            ("opm-circular", {"bins": 64}),
        ):
            protocol = local.make(name, epsilon=epsilon, **extra)
            derived_cases.append({"config": protocol.config(), "derived": derived(protocol)})
    for epsilon in NICE_EPSILONS + LARGE_EPSILONS:  # pgr's field_size from a config without it (a record's attribute)
        for domain_size in (16, 100, 1024, 16384):
            protocol = local.make("pgr", epsilon=epsilon, domain_size=domain_size)
            config = {key: value for key, value in protocol.config().items() if key != "field_size"}
            derived_cases.append({"config": config, "derived": derived(protocol)})
    configs = [case["config"] for case in channels] + [local.make(name, **params).config() for name, params in LABEL_CASES]
    multi = []
    for name, params, records in MULTI_CASES:
        protocol = local.make(name, **params)
        multi.append({
            "view": protocol.client_view(),
            "inputs": records,
            "channel": protocol.channel(np.array(records, dtype=object)).tolist(),
        })
        configs.append(protocol.config())
    from dpdist.local.multi._fake import quantize_prior

    generator = np.random.default_rng(20261124)
    priors = PRIORS + [list(generator.dirichlet(np.full(size, 0.3))) for size in (9, 17, 129, 300, 1000)]
    prior_weights = [{"prior": prior, "weights": quantize_prior(np.asarray(prior)).tolist()} for prior in priors]
    from dpdist.local.multi._grids import guideline_granularities

    granularities = [
        [n, epsilon, k, hybrid, resolution, *guideline_granularities(n, epsilon, k, hybrid, resolution)]
        for n in (10, 1000, 10**5, 10**6, 3 * 10**7) for epsilon in NICE_EPSILONS[::7] + LARGE_EPSILONS
        for k in (2, 5) for hybrid in (True, False) for resolution in (4, 64, 1024)
    ]
    from dpdist.local.frequency.flh import family_seeds
    from dpdist.local.words import encode_strings, mix_prefixes

    items, _ = encode_strings(PEM_WORDS, max_chars=12)
    pem = {
        "alphabet": "abcdefghijklmnopqrstuvwxyz",
        "max_chars": 12,
        "words": PEM_WORDS,
        "items": [str(item) for item in items.tolist()],
        "prefixes": [str(prefix) for prefix in PEM_PREFIXES],
        "mixes": mix_prefixes(PEM_PREFIXES).tolist(),
        "family_seed": 2**53 - 1,
        "seeds": [str(seed) for seed in family_seeds(2**53 - 1, 6, 2**31 - 1).tolist()],
    }
    memos = []
    for name, params in MEMO_CASES:
        protocol = local.make(name, **params)
        device = protocol.client()
        for value in MEMO_VALUES:
            device.report(value, rng=7)
        state = json.loads(json.dumps(device.to_dict()))
        if name == "loloha":  # round two is GRR_g(p2, q2) of the memoized hash value
            g = protocol.hash_range
            instantaneous = np.full((g, g), protocol._q2) + np.eye(g) * (protocol._p2 - protocol._q2)
        elif name == "dbitflippm":  # no second round: reports replay the memoized bits
            instantaneous = None
        else:
            instantaneous = protocol.instantaneous_channel()
        memos.append({"state": state, "instantaneous": None if instantaneous is None else instantaneous.tolist()})
    getcontext().prec = 50
    generator = random.Random(20261122)
    xs = NICE_EPSILONS + [generator.uniform(-30.0, 30.0) for _ in range(1000)] + [generator.uniform(0.0, 1.0) for _ in range(300)]
    return {
        "generated_by": "clients/js/test/make_fixture.py",
        "channels": channels,
        "derived": derived_cases,
        "configs": configs,
        "multi": multi,
        "priors": prior_weights,
        "granularities": granularities,
        "pem": pem,
        "memos": memos,
        "exp": {
            "x": xs,
            "math_exp": [math.exp(x) for x in xs],
            "correctly_rounded": [float(Decimal(x).exp()) for x in xs],
        },
        "answers": answer_bounds(),
        "report_bound": report_bound(),
        "ceil_log2": [
            [x, math.ceil(math.log2(x))]
            for x in [1.0, 1.5, 2.0, 3.0, 4.0, 1023.0, 1024.0, 1025.0]
            + [math.ldexp(1.0 + i * 2.0**-52, k) for k in range(0, 12) for i in range(0, 6)]
        ],
    }


def answer_bounds() -> dict:
    """What the device clients read of an answer (dpdist._json): the bytes of an acknowledgement, a
    refusal, a token answer or a key (Python's ``ACK_ANSWER_BYTES``), and the values and containers JSON within a
    bound may hold before it is parsed (``most_values_within``), with ``values_upper_bound`` of a few texts."""
    from dpdist._http._deadline import ACK_ANSWER_BYTES, CONFIG_ANSWER_BYTES
    from dpdist._json import most_values_within, values_upper_bound

    texts = ['{"campaign":[{},{},{}]}', '"a,b:[{"', "[]", "1", '{"k": [1, 2.5, "\\u00e9,x"], "m": {"n": null}}',
             '{"é": ["ü", ":"]}']
    return {
        "ack_bytes": ACK_ANSWER_BYTES,
        "config_bytes": CONFIG_ANSWER_BYTES,
        "within": [[limit, *most_values_within(limit)] for limit in (0, 1000, 1 << 19, 1 << 20, 4 << 20, 16 << 20, 20 << 20, 128 << 20)],
        "counts": [[text, *values_upper_bound(text.encode("utf-8"))] for text in texts],
    }


#: configs of large domains: the last ones' statistics are over the device's ceiling
_BOUND_CASES = [
    ("oue", {"epsilon": 1.0, "domain_size": 1 << 20}),
    ("grr", {"epsilon": 1.0, "domain_size": 70000}),
    ("cms", {"epsilon": 1.0, "domain_size": 1 << 30, "hash_count": 64, "width": 1024}),
    ("oue", {"epsilon": 1.0, "domain_size": 20_000_000}),
    ("dbitflippm", {"epsilon": 1.0, "domain_size": 5_000_000, "sampled_bits": 1}),
]


#: label counts of GRR configs whose record header is about 1 MiB (10 bytes a label: ``"000123", ``)
_HEADER_LABELS = (3, 104_000, 104_800, 105_000)


def report_bound() -> dict:
    """What bounds a report of a fetched config: the ceilings and, per config, ``record_bytes`` of 1 and 7
    reports and the statistic's bytes (the device clients compute them from their own protocols)."""
    from dpdist import local
    from dpdist._io._binary import _MAX_HEADER_BYTES
    from dpdist._wire._report_bound import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_STATISTIC_BYTES, header_bytes, record_bytes

    cases = [(name, params) for name, params in CHANNEL_CASES] + [(name, params) for name, params, _ in MULTI_CASES]
    rows = []
    for name, params in cases + _BOUND_CASES:
        protocol = local.make(name, **params)
        statistic = int(protocol.statistic_size) * np.dtype(protocol.statistic_dtype).itemsize
        rows.append([protocol.config(), record_bytes(protocol, 1), record_bytes(protocol, 7), statistic])
    headers = []  # GRR over n labels f"{i:06d}", its record header just within and just past 1 MiB
    for n in _HEADER_LABELS:
        protocol = local.make("grr", epsilon=1.0, domain_size=n, labels=[f"{i:06d}" for i in range(n)])
        headers.append([n, header_bytes(protocol)])
    return {"max_body_bytes": DEFAULT_MAX_BODY_BYTES, "max_statistic_bytes": DEFAULT_MAX_STATISTIC_BYTES,
            "max_header_bytes": _MAX_HEADER_BYTES, "headers": headers, "cases": rows}


def render(fixture: dict) -> str:
    return json.dumps(fixture, indent=None, separators=(",", ":")) + "\n"


if __name__ == "__main__":
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(render(build_fixture()))
    print(f"wrote {FIXTURE}")
