"""Reproductions of papers: one package per paper, run by :mod:`dpdist.experiments`.

Every package below this one is a spec that ``dpdist reproduce NAME`` finds by itself:
the package ``sw_ems`` is the spec ``sw-ems`` (underscores become hyphens).  A package
defines ``SPEC`` (an :class:`~dpdist.experiments.ExperimentSpec`) in its ``__init__``
and keeps the rest of the paper with it:

``spec.py``
    the datasets, methods, grid, figures and claims of the paper, and what differs from it;
``methods.py``
    method adapters and metrics only this paper needs (runner methods
    ``(values, dataset, params, rng) -> estimate``, metrics ``(estimate, truth) -> float``);

The claims are data: each is a check of the claims library of :mod:`dpdist.experiments`
(:func:`~dpdist.experiments.better_than`, :class:`~dpdist.experiments.BeatsRivals`,
:class:`~dpdist.experiments.RatioWithin`, :class:`~dpdist.experiments.RatioContrast`, ...), so
every paper's verdicts follow one rule; a claim no check of the library fits is a new check of
the library (with its error-rate simulation in ``tests/test_verdict_error_rates.py``), not of the
paper.  The ``checks.py`` of ``central``, ``sw_ems``, ``wavelet`` and ``wiener`` keep the names
their checks had before they moved to the library.

Adding a paper is adding one folder; nothing else is edited.  The matching page of the
documentation is ``docs/reproductions/<name>.md``.
"""
