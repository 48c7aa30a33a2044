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
