"""The JSON Schema (2020-12) of an estimate's JSON: what ``to_dict`` / ``to_json`` return and the service serves.

``docs/reference/results.md`` explains it field by field; the service's OpenAPI description embeds it
(``components/schemas/EstimateResult``); ``tests/estimates/test_contract.py`` validates every kind of
result against it, and every estimate's ``from_dict`` reads a document through it (:mod:`._reading`).
Readers ignore fields they do not know: within one ``schema`` version fields are added, never
removed or given another meaning.
"""

from __future__ import annotations

from typing import Any

__all__ = ["JSON_SCHEMA", "SCHEMA"]

#: The ``schema`` value of every estimate's JSON (bumped when a field changes meaning or goes).
SCHEMA = "dpdist.estimate/1"

_NUMBER = {"type": ["number", "null"], "description": "null: missing or not finite (no limit there)"}
_NUMBERS = {"type": "array", "items": _NUMBER}
_NUMBER_OR_NUMBERS = {"type": ["number", "null", "array"], "items": _NUMBER}
_LEVEL = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}

INTERVAL: dict[str, Any] = {
    "type": "object",
    "description": "Confidence limits of one quantity of the estimate (dpdist.estimates.Interval).",
    "required": ["quantity", "at", "estimate", "low", "high", "level", "simultaneous", "anytime_valid", "method"],
    "properties": {
        "quantity": {"type": "string", "description": "what is bounded: frequency, cdf, quantile or mean"},
        "at": {
            "type": ["array", "null"],
            "items": {"type": "number"},
            "description": "the points: items (frequency), values (cdf), probabilities (quantile); null for a scalar",
        },
        "estimate": {**_NUMBER_OR_NUMBERS, "description": "the point estimate at each point (a number for a scalar)"},
        "low": {**_NUMBER_OR_NUMBERS, "description": "lower limits, like estimate (null: no interval there)"},
        "high": {**_NUMBER_OR_NUMBERS, "description": "upper limits, like estimate (null: no interval there)"},
        "level": _LEVEL,
        "simultaneous": {"type": "boolean", "description": "true: the limits hold at every point of at at once"},
        "anytime_valid": {
            "type": "boolean",
            "description": "true: the limits hold at every number of reports of a collection watched as it grows "
            "(a confidence sequence); false: at one fixed number of reports",
        },
        "empty": {
            "type": "boolean",
            "description": "true: the confidence set is empty (no value is consistent with the data at this level, "
            "e.g. support counts that fit no distribution: a poisoning signal); low and high are null",
        },
        "method": {"type": "string", "description": "how the limits were computed"},
    },
}

GUARANTEE: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "The privacy guarantee (dpdist.privacy.PrivacyGuarantee.to_dict); null when unknown.",
    "required": ["epsilon", "delta", "neighbouring", "model"],
    "properties": {
        "epsilon": {"type": "number", "exclusiveMinimum": 0},
        "delta": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "neighbouring": {"enum": ["replace", "add-remove", "history", "stable", "attribute"]},
        "model": {"enum": ["local", "central"]},
        "reports": {"type": "integer", "minimum": 1,
                    "description": "neighbouring history: the reports of one device covered"},
        "unit": {"enum": ["person"],
                 "description": "absent: a neighbour adds, removes or replaces one record; 'person': all of one "
                 "person's records (a central release with privacy_id)"},
    },
}

_LEGACY_BAND: dict[str, Any] = {
    "type": ["object", "null"],
    "description": "The estimate's main interval in the form the service served before 'intervals' (kept for its "
    "clients; read 'intervals')",
    "properties": {"level": _LEVEL, "low": _NUMBER_OR_NUMBERS, "high": _NUMBER_OR_NUMBERS},
}

_CDF_BAND = {
    "type": ["object", "null"],
    "description": "The CDF band (dpdist.estimates.CDFBand.to_dict), null without one",
    "properties": {
        "level": _LEVEL,
        "replicates": {"type": "integer"},
        "method": {"type": "string"},
        **{name: _NUMBERS for name in ("edges", "lower", "upper", "simultaneous_lower", "simultaneous_upper")},
    },
}

#: The fields of each kind, beside the envelope every estimate has.
KINDS: dict[str, dict[str, Any]] = {
    "frequency": {
        "items": {"type": "array", "items": {"type": "integer"}},
        "labels": {"type": ["array", "null"], "items": {"type": "string"}},
        "frequencies": _NUMBERS,
        "standard_error": _NUMBERS,
        "postprocess": {"type": "string"},
        "no_interval": {"type": ["string", "null"], "description": "why there are no intervals, if there are none"},
        "band": _LEGACY_BAND,
    },
    "heavy_hitters": {
        "items": {"type": "array", "items": {"type": "integer"}},
        "labels": {"type": "array", "items": {"type": "string"}},
        "frequencies": _NUMBERS,
        "standard_error": {"type": ["array", "null"], "items": _NUMBER},
        "k": {"type": ["integer", "null"]},
        "threshold": {"type": ["number", "null"]},
        "rounds": {"type": ["array", "null"], "items": {
            "type": "object", "required": ["candidates"],
            "properties": {"candidates": {"type": "integer", "minimum": 1,
                                          "description": "the candidates of the round (the last: what the intervals hold over)"},
                           "users": {"type": "integer", "minimum": 0}, "prefix_bits": {"type": "integer", "minimum": 1}}}},
        "band": {**_LEGACY_BAND, "properties": {**_LEGACY_BAND["properties"], "simultaneous_over": {"type": "integer"}}},
    },
    "distribution": {
        "edges": _NUMBERS,
        "probabilities": _NUMBERS,
        "cdf": {**_NUMBERS, "description": "the CDF at the right edge of each bin"},
        "mean": _NUMBER,
        "median": _NUMBER,
        "quantiles": {
            "type": "object",
            "required": ["q", "values"],
            "properties": {"q": _NUMBERS, "values": _NUMBERS},
        },
        "band": _CDF_BAND,
        "period": {**_NUMBER, "description": "present when the bounds are one period of a circle (opm-circular): "
                   "mean is then the circular mean, and the quantiles are measured from the lower bound"},
    },
    "mean": {"mean": _NUMBER, "standard_error": _NUMBER, "bounds": {**_NUMBERS, "minItems": 2, "maxItems": 2},
             "band": _LEGACY_BAND},
    "mean_variance": {
        "mean": _NUMBER,
        "var": _NUMBER,
        "mean_standard_error": _NUMBER,
        "var_standard_error": _NUMBER,
        "center": _NUMBER,
        "band": _LEGACY_BAND,
        "phases": {
            "type": "object",
            "required": ["mean", "deviation"],
            "description": "the two phases' estimates (each a mean estimate): the mean, then the squared deviations",
            "properties": {"mean": {"$ref": "#"}, "deviation": {"$ref": "#"}},
        },
    },
    "multi": {
        "attributes": {
            "type": "object",
            "additionalProperties": {"$ref": "#"},
            "description": "each attribute's estimate (an estimate of its own kind), by attribute name",
        },
        "attribute_guarantee": {**GUARANTEE, "description": "the guarantee for two records differing in one attribute"},
    },
    "marginals": {
        "marginals": {
            "type": "array",
            "description": "each reported marginal: its attributes, shape, item labels, cell frequencies (C order) and limits",
            "items": {
                "type": "object",
                "required": ["attributes", "shape", "frequencies", "standard_error"],
                "properties": {
                    "attributes": {"type": "array", "items": {"type": "string"}},
                    "shape": {"type": "array", "items": {"type": "integer"}},
                    "labels": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                    "frequencies": _NUMBERS,
                    "standard_error": _NUMBERS,
                    "low": _NUMBERS,
                    "high": _NUMBERS,
                },
            },
        },
        "postprocess": {"type": "string"},
        "attribute_guarantee": GUARANTEE,
    },
    "key_value": {
        "items": {"type": "array", "items": {"type": "integer"}, "description": "the keys 0 .. d-1"},
        "labels": {"type": "null"},
        "frequencies": {**_NUMBERS, "description": "each key's share of the users holding it"},
        "standard_error": _NUMBERS,
        "means": {**_NUMBERS, "description": "each key's mean value over the users holding it, in [-1, 1]; "
                  "null (not estimated) where the key's frequency is below 2 standard errors of its estimate"},
        "frequency": {"$ref": "#", "description": "the keys' frequencies as a frequency estimate of their own"},
    },
    "ranges": {
        "attributes": {
            "type": "array",
            "description": "the numerical attributes, in order: name and bounds",
            "items": {"type": "object", "required": ["name", "bounds"],
                      "properties": {"name": {"type": "string"}, "bounds": _NUMBERS}},
        },
        "resolution": {"type": "integer", "description": "equal bins per attribute"},
        "histograms": {"type": "array", "items": _NUMBERS, "description": "each attribute's frequency of each bin"},
        "matrices": {
            "type": "array",
            "description": "each pair's response matrix: the joint frequencies of their bins (rows: the first)",
            "items": {
                "type": "object",
                "required": ["attributes", "matrix"],
                "properties": {"attributes": {"type": "array", "items": {"type": "string"}},
                               "matrix": {"type": "array", "items": _NUMBERS}},
            },
        },
        "no_interval": {"type": "string", "description": "why the range answers have no interval"},
    },
    "count": {
        "count": {"type": "number", "description": "the noisy count (an integer)"},
        "standard_error": {"type": "number", "minimum": 0, "description": "the noise's standard deviation"},
        "low": {"type": "number", "description": "the interval's lower end (covers the count released)"},
        "high": {"type": "number", "description": "the interval's upper end"},
        "level": _LEVEL,
    },
    "scalar": {
        "statistic": {"enum": ["sum", "mean"], "description": "which statistic the value is"},
        "value": {"type": "number", "description": "the noisy statistic of the clipped values"},
        "standard_error": {"type": "number", "minimum": 0, "description": "the noise's standard deviation"},
        "low": {"type": "number", "description": "the interval's lower end (covers the statistic released)"},
        "high": {"type": "number", "description": "the interval's upper end"},
        "level": _LEVEL,
    },
    "quantiles": {
        "q": _NUMBERS,
        "values": _NUMBERS,
        "low": {"type": ["array", "null"], "items": _NUMBER},
        "high": {"type": ["array", "null"], "items": _NUMBER},
        "level": _LEVEL,
    },
}

#: lists of a kind that hold one entry per item (``equalLengths``, a keyword of dpdist's reader, :mod:`dpdist._documents`)
SAME_LENGTH = {
    "frequency": ["items", "frequencies", "standard_error", "labels"],
    "heavy_hitters": ["items", "labels", "frequencies", "standard_error"],
    "key_value": ["items", "frequencies", "standard_error", "means"],
    "quantiles": ["q", "values", "low", "high"],
    "distribution": ["probabilities", "cdf"],
}

#: the kinds whose number of reports is always public (their ``n`` is an integer, never null)
for _kind in ("frequency", "heavy_hitters", "mean", "mean_variance", "key_value", "multi", "marginals", "ranges"):
    KINDS[_kind] = {"n": {"type": "integer", "minimum": 0}, **KINDS[_kind]}

#: fields of a kind that only some estimates carry (a distribution on a circle: its ``period``)
OPTIONAL = frozenset({"period"})

JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "dpdist estimate",
    "description": "An estimate as JSON: dpdist.estimates.Estimate.to_dict (docs/reference/results.md).",
    "type": "object",
    "required": ["schema", "kind", "method", "n", "epsilon", "guarantee", "summary", "intervals", "notes"],
    "properties": {
        "schema": {"const": SCHEMA},
        "kind": {"enum": list(KINDS)},
        "method": {"type": ["string", "null"], "description": "the protocol's registry name or the central method"},
        "n": {"type": ["integer", "null"], "minimum": 0,
              "description": "reports or records behind it (null where it is private)"},
        "epsilon": {"type": ["number", "null"], "exclusiveMinimum": 0,
                    "description": "the budget of the method (null only with a null guarantee: no privacy is claimed)"},
        "guarantee": GUARANTEE,
        "summary": {
            "type": "object",
            "additionalProperties": _NUMBER,
            "description": "the headline numbers, named (Estimate.summary)",
        },
        "intervals": {"type": "array", "items": INTERVAL},
        "notes": {
            "type": "array",
            "items": {"type": "string"},
            "description": "what a reader must know to read the estimate, in sentences (e.g. CP found no item above "
            "the noise: its estimate is the uniform distribution); usually empty",
        },
    },
    "allOf": [
        {
            "if": {"properties": {"kind": {"const": kind}}},
            "then": {"required": [name for name in fields if name not in OPTIONAL], "properties": fields,
                     **({"equalLengths": SAME_LENGTH[kind]} if kind in SAME_LENGTH else {})},
        }
        for kind, fields in KINDS.items()
    ],
}
