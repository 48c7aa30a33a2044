"""The steps every audit runs, whatever it audits (a local randomizer, a whole-column mechanism, a central
release): check the settings, certify on fresh outputs, fit a stated channel, judge, and write the result."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import Boolean, Described, Integer, Interval, check_param, check_params, validate_params
from ._black_box import BlackBox, run_black_box
from ._randomizer import Randomizer
from ._result import AuditResult
from ._white_box import WhiteBox, run_white_box

__all__ = ["Settings", "check_settings", "certify", "fit_channel", "verdict_of", "assemble"]

_CONSTRAINTS = {
    "epsilon": Interval(0, math.inf, closed="left"),
    "delta": Interval(0, 1, closed="left"),
    "alpha": Interval(0, 0.5, closed="neither"),
    "samples": Integer(low=200, high=10**9),
    "pilot": Integer(low=100, high=10**8),
    "sequential": Boolean(),
    "keep": Integer(low=1, high=64),
    "bins": Integer(low=2, high=256),
    "max_cells": Integer(low=4, high=1 << 16),
    "float_bits": Boolean(),
}


@dataclass(frozen=True)
class Settings:
    """An audit's checked settings (the arguments of :func:`dpdist.audit.audit`)."""

    claim: float
    delta: float
    alpha: float
    samples: int
    pilot: int
    sequential: bool
    keep: int
    bins: int
    max_cells: int
    float_bits: bool
    started: float


@validate_params({"epsilon": Described(_CONSTRAINTS["epsilon"], "the epsilon the randomizer claims: a finite float >= 0")},
                 owner_argument="owner")
def check_settings(owner: str, epsilon: Any, *, delta: Any = 0.0, alpha: Any, samples: Any, pilot: Any,
                   sequential: Any, keep: Any, bins: Any, max_cells: Any, float_bits: Any = True) -> Settings:
    """Every setting checked by name (the pilot's default from ``samples``: at most an eighth, 100 to 2,000)."""
    started = time.perf_counter()
    samples = check_params(owner, {"samples": samples}, _CONSTRAINTS)["samples"]  # first: the pilot's default needs it
    pilot = max(100, min(samples // 8, 2000)) if pilot is None else pilot
    params = check_params(owner, {"epsilon": epsilon, "delta": delta, "alpha": alpha, "samples": samples,
                                  "pilot": pilot, "sequential": sequential, "keep": keep, "bins": bins,
                                  "max_cells": max_cells, "float_bits": float_bits}, _CONSTRAINTS)
    check_param(owner, "pilot", params["pilot"], Described(Integer(high=params["samples"] // 2),
                                                           f"at most half of 'samples' ({params['samples']})"))
    return Settings(params["epsilon"], params["delta"], params["alpha"], params["samples"], params["pilot"],
                    params["sequential"], params["keep"], params["bins"], params["max_cells"], params["float_bits"],
                    started)


def certify(randomizer: Randomizer, inputs: np.ndarray, pairs: np.ndarray, settings: Settings,
            rng: np.random.Generator, single: bool = False) -> BlackBox:
    """The black-box certificate on ``pairs`` of ``inputs`` (:mod:`dpdist.audit._black_box`); ``single``: end
    with a stage of one-value calls (a local randomizer, as a device calls it)."""
    return run_black_box(randomizer, inputs, pairs, settings.claim, settings.alpha, settings.samples, settings.pilot,
                         settings.sequential, settings.keep, settings.bins, settings.max_cells, rng,
                         delta=settings.delta, float_bits=settings.float_bits, single=single)


def fit_channel(randomizer: Randomizer, inputs: np.ndarray, settings: Settings, rng: np.random.Generator
                ) -> WhiteBox | None:
    """The stated channel's exact epsilon and fit, where one is stated (at most 20,000 outputs per input)."""
    if not randomizer.white_box:
        return None
    return run_white_box(randomizer, inputs, min(settings.samples, 20_000), rng)


def verdict_of(found: BlackBox, white: WhiteBox | None, settings: Settings) -> str:
    """``"violates"`` when the certified bound or the stated channel's exact epsilon exceeds the claim;
    ``"channel mismatch"`` when the samples do not follow the stated channel; else ``"no violation found"``."""
    claim = settings.claim
    if found.certified > claim or (white is not None and white.channel_epsilon > claim * (1 + 1e-9) + 1e-12):
        return "violates"
    if white is not None and white.fit_pvalue < settings.alpha:
        return "channel mismatch"
    return "no violation found"


def assemble(randomizer: Randomizer, settings: Settings, found: BlackBox, white: WhiteBox | None, inputs_text: str,
             count: int, seed: Any, *, neighbouring: str = "", notes: tuple[str, ...] = ()) -> AuditResult:
    """The :class:`AuditResult` of the steps above (``count`` inputs audited)."""
    every = list(randomizer.notes) + list(notes)
    if not randomizer.seeded:
        every.append("the randomizer draws its own randomness: a seed does not repeat the audit")
    if randomizer.repeated_value_calls and len(found.stages) == found.planned:  # the one-value stage (the last) ran
        every.append("the one-value stage called the randomizer with one input repeated in each call (it states that a "
                     "call of k copies of a value gives what k calls of it alone would)")
    if not settings.float_bits:
        every.append("float_bits=False: no bit of any output was examined (no bit planes, float exponents or lowest "
                     "set bits), only values and quantile bins")
    extra = 0 if white is None else white.samples_per_input
    delta = f", delta {settings.delta:g} subtracted from each lower bound" if settings.delta else ""
    return AuditResult(
        name=randomizer.name,
        claimed_epsilon=settings.claim,
        confidence=1.0 - settings.alpha,
        certified_epsilon=found.certified,
        verdict=verdict_of(found, white, settings),
        witness_power_loss=found.witness_power_loss,
        samples_per_input=found.samples_per_input,
        samples=(found.samples_per_input + extra) * count,
        seconds=time.perf_counter() - settings.started,
        witness=found.witness,
        stages=found.stages,
        channel_epsilon=None if white is None else white.channel_epsilon,
        fit_pvalue=None if white is None else white.fit_pvalue,
        inputs=inputs_text,
        method=(
            f"{len(found.stages)} of {found.planned} stage(s) of fresh outputs after a pilot of {settings.pilot}; "
            f"{settings.keep} event(s) per stage chosen on earlier outputs; one-sided Clopper-Pearson bounds at level "
            f"{found.level:.3g} each (alpha {settings.alpha:g} / 2 / planned stages / events){delta}"
        ),
        notes=tuple(every),
        seed=seed if isinstance(seed, (int, np.integer)) else None,
        smallest_examined_probability=found.smallest_examined,
        largest_stage=found.largest_stage,
        neighbouring=neighbouring,
        delta=settings.delta,
    )
