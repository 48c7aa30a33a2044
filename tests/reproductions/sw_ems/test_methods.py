"""The ``sw_ems`` reproduction's methods and metrics (``dpdist.reproductions.sw_ems.methods``)."""

import numpy as np
import pytest

from dpdist.reproductions.sw_ems import methods as paper_methods


def test_moment_errors_of_pm_and_sr_are_their_estimates_minus_the_sample_moments():
    truth = np.array([0.0, 0.5, 1.0, 1.0])
    estimate = paper_methods.MomentEstimate(mean=0.7, var=0.1, method="pm", epsilon=1.0)
    assert paper_methods.mean_abs_error(estimate, truth) == pytest.approx(abs(0.7 - 0.625))
    assert paper_methods.variance_abs_error(estimate, truth) == pytest.approx(abs(0.1 - np.var(truth)))
