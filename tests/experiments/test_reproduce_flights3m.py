"""The size-sensitive Taxi claims of the reproductions also run on ``flights3m-departure`` (3M flights).

Structure only (which cells and claims the specs hold); the numbers are in
``docs/reproductions/``.  The bin counts must not alias the data's minute grid and its
heaping on multiples of 5 minutes (``dpdist.datasets.flights3m``).
"""

from dpdist import experiments
from dpdist.reproductions.wiener import spec as wiener


def _cells(name):
    return experiments.get_spec(name).with_options(quick=True, repeats=1).cells()


def test_wiener_runs_the_epsilon_sweep_on_flights3m_in_non_aliasing_bins():
    spec = experiments.get_spec("wiener")
    refs = {ref.key: ref for ref in spec.datasets}
    assert refs[wiener.FLIGHTS3M].name == refs[wiener.FLIGHTS3M_5MIN].name == "flights3m-departure"
    for key, bins in ((wiener.FLIGHTS3M, 1440), (wiener.FLIGHTS3M_5MIN, 288)):
        width = 1440 / bins  # minutes per bin: the raw grid itself, or whole multiples of 5
        assert refs[key].bins == bins and width == int(width) and (width == 1 or width % 5 == 0)
        cells = [cell for cell in _cells("wiener") if cell.dataset.key == key]
        assert {cell.param_dict["epsilon"] for cell in cells} == {1.0, 2.0, 3.0, 4.0, 5.0}
        assert all(set(cell.param_dict) <= {"epsilon", "estimate_iterations", "estimate_sigma"} for cell in cells)
        assert {"KRR-IIW", "OUE-IIW", "KRR-IIW-G", "KRR-GF3-DW"} <= {cell.method.label for cell in cells}
        texts = [claim.text for claim in spec.claims if f"on {key} " in claim.text]
        assert any("IIW cuts the MSE of KRR" in text for text in texts)
    # the small stand-in keeps its claims
    assert any("IIW cuts the MSE of KRR on flights " in claim.text for claim in spec.claims)


def test_wavelet_runs_the_j_sweep_and_the_baselines_on_flights3m():
    from dpdist.reproductions.wavelet import spec as wavelet

    assert "flights3m-departure" in wavelet.SMOOTH and "flights-departure" in wavelet.SMOOTH
    cells = [cell for cell in _cells("wavelet") if cell.dataset.key == "flights3m-departure"]
    sweep = [cell for cell in cells if cell.method.label == wavelet.J_SWEEP]
    assert {cell.param_dict["levels"] for cell in sweep} == set(wavelet.LEVEL_SWEEP)
    others = [cell for cell in cells if cell.method.label != wavelet.J_SWEEP]
    # the slow wavelet variants (per-user privatization of 3M users) stay on the small data
    assert {cell.method.label for cell in others} == {wavelet.WAVELET, *wavelet.BASELINES}
    assert {cell.param_dict["epsilon"] for cell in cells} == set(wavelet.LEVEL_EPSILONS)
    spec = experiments.get_spec("wavelet")
    # Fig. 4's "best J well below the bound's J" on the taxi stand-ins, each with and without the minute grid
    best_j = [claim.text for claim in spec.claims if "best empirical J is well below" in claim.text]
    assert {key for key in ("flights-departure", "flights-smooth", "flights3m-departure", "flights3m-smooth")
            if any(f"({key})" in text for text in best_j)} == {"flights-departure", "flights-smooth",
                                                              "flights3m-departure", "flights3m-smooth"}


def test_sw_ems_runs_the_main_sweep_on_flights3m_at_1024_buckets():
    from dpdist.reproductions.sw_ems import spec as sw_ems

    assert "flights3m-departure" in sw_ems.REAL and "flights3m-departure" in sw_ems.SMOOTH
    for quick in (True, False):
        cells = [cell for cell in experiments.get_spec("sw-ems").with_options(quick=quick, repeats=1).cells()
                 if cell.dataset.key == "flights3m-departure"]
        labels = {cell.method.label for cell in cells}
        assert {"SW-EMS", "SW-EM", "HH-ADMM", "HaarHRR", "SW-EMS (d grid)"} <= labels
        assert not labels & {"SW", "GW triangle"}  # Figs. 5-6 stay on the smaller data
    texts = [claim.text for claim in experiments.get_spec("sw-ems").claims if "flights3m" in claim.text]
    # W1, KS and range queries at the paper's size, each on the departures and on them spread over 5-minute blocks
    for key in ("flights3m-departure", "flights3m-smooth"):
        on = [text for text in texts if key in text]
        assert any("lowest W1" in text for text in on) and any("lowest KS" in text for text in on)
        assert any("range queries" in text for text in on)
    assert len(texts) == 6
