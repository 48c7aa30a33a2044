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
the library (with its error-rate simulation in ``tests/experiments/checks/test_checks.py``), not of the
paper.  The ``checks.py`` of ``central``, ``sw_ems``, ``wavelet`` and ``wiener`` keep the names
their checks had before they moved to the library.

Adding a paper is adding one folder; nothing else is edited.  The matching page of the
documentation is ``docs/reproductions/<name>.md``.
"""

#: The source papers by number (the code cites "paper 000" .. "paper 004") and the name of each one's plain
#: text in the project's papers folder (listed with titles in ``docs/explanation/design.md``, "Source papers").
PAPER_FILES = {
    "000": "000_bd8f15feb90ea8ed.txt",
    "001": "001_ed76e35ff6c3e233.txt",
    "002": "002_31fdd3dbd792a51b.txt",
    "003": "003_168e87404547aacd.txt",
    "004": "004_24ba050d2f0ebfab.txt",
}
