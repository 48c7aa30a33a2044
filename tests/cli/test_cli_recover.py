"""`dpdist estimate --state STATE --recover ldprecover [--fake-fraction F]`: a saved campaign's genuine frequencies
(docs/explanation/poisoning.md, "Poisoned campaigns"), and one line naming the option when it is misplaced."""

from __future__ import annotations

import numpy as np

from dpdist import io, local, testing
from dpdist.cli import main


def _poisoned_grr_campaign():
    rng = np.random.default_rng([6, 50])
    protocol = local.make("grr", epsilon=1.0, domain_size=128)
    weights = 1.0 / np.arange(1, 129) ** 1.1
    aggregator = protocol.aggregator().add(protocol.privatize(rng.choice(128, 40_000, p=weights / weights.sum()), rng=rng))
    return protocol, aggregator.add(testing.maximal_gain_attack(protocol, 2_105, [97], rng=rng))


def test_the_estimate_command_recovers_a_saved_campaign_and_refuses_misplaced_options(tmp_path, capsys):
    protocol, aggregator = _poisoned_grr_campaign()
    io.save_state(tmp_path / "state.bin", aggregator)
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--recover", "ldprecover",
                 "--out", str(tmp_path / "recovered.csv")]) == 0
    table = np.genfromtxt(tmp_path / "recovered.csv", delimiter=",", names=True, dtype=None, encoding=None)
    column = [name for name in table.dtype.names if "freq" in name][0]
    expected = local.recover_frequencies(protocol, aggregator).frequencies
    np.testing.assert_allclose(np.asarray(table[column], dtype=float), expected, atol=1e-6)
    capsys.readouterr()
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--fake-fraction", "0.1"]) != 0
    error = capsys.readouterr().err
    assert "'--fake-fraction' option needs '--recover'" in error and "'--recover ldprecover'" in error
    assert "'fake_fraction'" not in error and len(error.strip().splitlines()) == 1
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--recover", "magic"]) != 0
    error = capsys.readouterr().err
    assert "--recover" in error and "ldprecover" in error and "magic" in error and "Traceback" not in error and len(error.strip().splitlines()) == 1
    (tmp_path / "data.csv").write_text("x\n" + "\n".join(["1", "2"] * 20) + "\n")
    assert main(["estimate", str(tmp_path / "data.csv"), "--column", "x", "--protocol", "grr", "--epsilon", "1",
                 "--labels", "1,2", "--recover", "ldprecover"]) != 0
    assert "'--recover' option needs '--state': a campaign's saved state" in capsys.readouterr().err
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--state", str(tmp_path / "state.bin"),
                 "--recover", "ldprecover"]) != 0
    assert "'--recover' option needs '--state' given at most 1 time(s)" in capsys.readouterr().err


def test_targets_reach_the_recovery_from_both_estimate_commands_and_a_bad_value_is_one_line(tmp_path, capsys):
    """``--targets 97,111`` (``recover_frequencies``'s ``targets``, the docs' ``targets=``) on ``dpdist estimate`` and
    ``dpdist campaign estimate``; a bad value or a misplaced one is refused in one line naming ``--targets``."""
    protocol, aggregator = _poisoned_grr_campaign()
    io.save_state(tmp_path / "state.bin", aggregator)
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--recover", "ldprecover", "--targets", "97,111",
                 "--out", str(tmp_path / "recovered.csv")]) == 0
    table = np.genfromtxt(tmp_path / "recovered.csv", delimiter=",", names=True, dtype=None, encoding=None)
    column = [name for name in table.dtype.names if "freq" in name][0]
    expected = local.recover_frequencies(protocol, aggregator, targets=[97, 111]).frequencies
    np.testing.assert_allclose(np.asarray(table[column], dtype=float), expected, atol=1e-6)
    capsys.readouterr()
    for arguments in (["estimate", "--state", str(tmp_path / "state.bin"), "--recover", "ldprecover", "--targets", "97,x"],
                      ["campaign", "estimate", "--server", "http://127.0.0.1:9", "survey", "--targets", "-1"]):
        assert main(arguments) != 0
        error = capsys.readouterr().err
        assert "'--targets'" in error and "Traceback" not in error and len(error.strip().splitlines()) == 1, error
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--targets", "97"]) != 0
    assert "'--targets' option needs '--recover': it applies with '--recover ldprecover'" in capsys.readouterr().err
    (tmp_path / "data.csv").write_text("x\n" + "\n".join(["1", "2"] * 20) + "\n")
    assert main(["estimate", str(tmp_path / "data.csv"), "--column", "x", "--protocol", "grr", "--epsilon", "1",
                 "--labels", "1,2", "--targets", "1"]) != 0
    assert "'--targets' option needs '--state': a campaign's saved state" in capsys.readouterr().err
