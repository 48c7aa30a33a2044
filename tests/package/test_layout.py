"""Tests mirror the package: "which tests cover this file?" is answered by its path.

The tests of ``src/dpdist/<package>/<module>.py`` are in ``tests/<package>/test_<module>.py`` (scikit-learn's
layout, one folder per package, the leading underscore of a private name dropped): ``src/dpdist/_io/_atomic.py`` ->
``tests/io/test_atomic.py``, ``src/dpdist/local/frequency/grr.py`` -> ``tests/local/frequency/test_grr.py``; a
package's own code (its ``__init__.py``) -> ``tests/<package>/test_<package>.py``; a module and its private twin
(``frequency/longitudinal.py``, ``frequency/_longitudinal.py``) share one file.  Test files share helpers through the
support modules at the top of ``tests/`` (``serve_support.py``, ...), never by importing one another.

Beside them, four folders hold what no single module owns: ``tests/conformance`` (the common module: every check of
the conformance kit on every registered protocol, and the other registry-wide checks), ``tests/package`` (rules over
the whole package and the suite's own machinery), ``tests/docs`` (the pages: ``tests/docs/test_<page>.py`` checks
``docs/<page>.md``) and ``tests/clients`` (the JavaScript client in ``clients/js``).

A module needs no file of its own when:

- it is an ``__init__.py`` that only gathers names (imports, ``__all__``, a lazy ``__getattr__``): its names are
  tested where they are defined;
- it is a ``__main__.py`` (``python -m dpdist.cli``: the command-line tests run it);
- it registers a local protocol: the common module runs every check its tags call for on it
  (tests/conformance/test_conformance.py), besides the tests of the family it belongs to.

Every other module without its file is listed in :data:`NOT_YET_SPLIT` with the test files that test it today
(found by what they import and call, down the package's import graph), until its tests move into its own file.  The
list only shrinks: an entry whose module got its own file, or whose named files are gone, fails; a new module comes
with its test file.  No test file is named after a review or an issue: a review's tests go into the files of the
modules they test, named by what they check.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from dpdist import local
from dpdist.local._registry import registered_class

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "dpdist"
TESTS = ROOT / "tests"
#: test folders that mirror no module of src/dpdist (see the module's docstring)
COMMON_FOLDERS = {"conformance", "package", "docs", "clients"}
#: a file named after a review, an outsider's reading or an issue (test_attack44.py, test_newcomer51.py, ...)
REVIEW_NAME = re.compile(r"attack|newcomer|outsider|review|finding|dead_end|fuzz|issue(?!r)|\d\d")


def mirrored_test_file(module: Path) -> Path:
    """The test file of a source module: ``src/dpdist/_io/_atomic.py`` -> ``tests/io/test_atomic.py``."""
    *folders, name = module.relative_to(SOURCE).parts
    folders = [folder.lstrip("_") for folder in folders]
    if name == "__init__.py":  # the package's own code
        return TESTS.joinpath(*folders, f"test_{folders[-1] if folders else 'dpdist'}.py")
    return TESTS.joinpath(*folders, f"test_{name.lstrip('_')}")


def _gathers_names_only(module: Path) -> bool:
    """An ``__init__.py`` that defines nothing but a lazy ``__getattr__``: it re-exports."""
    if module.name != "__init__.py":
        return False
    tree = ast.parse(module.read_text())
    defined = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return set(defined) <= {"__getattr__"}


@functools.cache
def _registered_protocol_modules() -> set[str]:
    return {registered_class(name).__module__ for name in local.available()}


def _dotted(module: Path) -> str:
    parts = module.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[Path]:
    return sorted(path for path in SOURCE.rglob("*.py") if "_clients_js" not in path.parts)


def _exempt(module: Path, protocols: set[str]) -> bool:
    return _gathers_names_only(module) or module.name == "__main__.py" or _dotted(module) in protocols


def test_every_module_has_its_test_file_or_a_listed_reason():
    protocols = _registered_protocol_modules()
    missing = [f"{module.relative_to(SOURCE)} -> {mirrored_test_file(module).relative_to(ROOT)}" for module in _modules()
               if not mirrored_test_file(module).exists() and not _exempt(module, protocols)
               and str(module.relative_to(SOURCE)) not in NOT_YET_SPLIT]
    assert not missing, "modules without their test file (tests mirror the package; tests/package/test_layout.py):\n" + "\n".join(missing)


def test_the_not_yet_split_list_only_shrinks():
    protocols = _registered_protocol_modules()
    stale = []
    for name, files in NOT_YET_SPLIT.items():
        module = SOURCE / name
        if not module.exists():
            stale.append(f"{name}: no such module")
        elif mirrored_test_file(module).exists() or _exempt(module, protocols):
            stale.append(f"{name}: has {mirrored_test_file(module).relative_to(ROOT)} (or needs none): drop its entry")
        stale += [f"{name}: {file} is gone" for file in files if not (TESTS / file).is_file()]
    assert not stale, stale


def test_test_files_mirror_a_module_or_sit_in_a_common_folder():
    """A test file at the top of a mirrored folder names a module of that package (or the package itself)."""
    expected = {mirrored_test_file(module) for module in _modules()}
    stray = [str(path.relative_to(ROOT)) for path in sorted(TESTS.rglob("test_*.py"))
             if path not in expected and path.relative_to(TESTS).parts[0] not in COMMON_FOLDERS
             and str(path.relative_to(TESTS)) not in NOT_YET_MIRRORED]
    assert not stray, "test files that name no module (tests/<package>/test_<module>.py):\n" + "\n".join(stray)


def test_no_test_file_is_named_after_a_review():
    named = [str(path.relative_to(ROOT)) for path in [*TESTS.rglob("test_*.py"), *(ROOT / "clients" / "js" / "test").glob("*.test.js")]
             if REVIEW_NAME.search(path.name.removeprefix("test_"))]
    assert not named, named


def test_the_rule_finds_the_files_the_layout_names():
    """The rule itself, on the cases the docstring names (a wrong rule would pass the tests above vacuously)."""
    assert mirrored_test_file(SOURCE / "_io" / "_atomic.py") == TESTS / "io" / "test_atomic.py"
    assert mirrored_test_file(SOURCE / "local" / "frequency" / "grr.py") == TESTS / "local" / "frequency" / "test_grr.py"
    assert mirrored_test_file(SOURCE / "local" / "frequency" / "_longitudinal.py") == mirrored_test_file(SOURCE / "local" / "frequency" / "longitudinal.py")
    assert mirrored_test_file(SOURCE / "confidence_sequences" / "__init__.py") == TESTS / "confidence_sequences" / "test_confidence_sequences.py"
    assert mirrored_test_file(SOURCE / "__init__.py") == TESTS / "test_dpdist.py"
    assert _gathers_names_only(SOURCE / "serve" / "__init__.py") and not _gathers_names_only(SOURCE / "testing" / "__init__.py")
    assert "dpdist.local.frequency.grr" in _registered_protocol_modules()
    assert REVIEW_NAME.search("attack44.py") and REVIEW_NAME.search("newcomer51.py") and not REVIEW_NAME.search("grr.py")


#: modules whose tests are still in other modules' files: the test files (under tests/) that test them today
NOT_YET_SPLIT: dict[str, tuple[str, ...]] = {
    "_bounded_reads.py": ("test_deadline.py", "privacypass/test_fetch.py"),
    "_guarantee.py": ("budget/test_session.py", "test_privacy.py"),
    "_guard/_body.py": ("serve/test_limits.py",),
    "_guard/_limits.py": ("serve/test_limits.py", "relay/test_arguments.py"),
    "_guard/_middleware.py": ("serve/test_limits.py", "relay/test_arguments.py"),
    "_guard/_protocol.py": ("serve/test_serve_abuse.py", "serve/test_limits.py"),
    "_guard/_protocol_httptools.py": ("serve/test_limits.py", "relay/test_arguments.py"),
    "_guard/_rate.py": ("serve/test_limits.py", "serve/test_serve_abuse.py"),
    "_guard/_refusals.py": ("serve/test_estimator.py", "serve/test_app.py"),
    "_guard/_sockets.py": ("serve/test_limits.py", "relay/test_arguments.py"),
    "_io/_arrow.py": ("io/test_binary.py",),
    "_io/_blocks.py": ("local/test_circular_campaign.py",),
    "_io/_budget_file.py": ("budget/test_session.py", "test_client.py"),
    "_io/_columns.py": ("cli/test_deploy.py",),
    "_io/_dedupe.py": ("io/test_identity.py", "clients/test_js_client.py"),
    "_io/_files.py": ("io/test_identity.py", "io/test_binary.py"),
    "_io/_ledger_file.py": ("serve/test_rounds.py", "local/test_ledger.py"),
    "_io/_read_errors.py": ("datasets/test_datasets.py", "cli/test_deploy.py"),
    "_missing.py": ("frame/test_frame.py", "central/test_joint_exp.py"),
    "_tls.py": ("serve/test_limits.py",),
    "_types.py": ("amplification/test_amplification.py", "local/test_joint.py"),
    "accounting/_channels.py": ("accounting/test_accountants.py", "accounting/test_protocols.py"),
    "accounting/_distributions.py": ("accounting/test_protocols.py",),
    "accounting/_loss.py": ("accounting/test_accountants.py", "local/test_ledger.py"),
    "accounting/_mechanisms.py": ("accounting/test_accountants.py", "budget/test_session.py"),
    "accounting/_pair_classes.py": ("amplification/test_amplification.py", "amplification/test_composition.py"),
    "accounting/_pld.py": ("accounting/test_protocols.py", "amplification/test_loss.py"),
    "accounting/_zcdp.py": ("accounting/test_protocols.py", "budget/test_session.py"),
    "accuracy/_central.py": ("accuracy/test_accuracy.py", "accuracy/test_plan.py"),
    "accuracy/_ladder_result.py": ("accuracy/test_ladder.py",),
    "accuracy/_ladder_rows.py": ("accuracy/test_ladder.py",),
    "accuracy/_ladder_simulation.py": ("accuracy/test_ladder.py",),
    "accuracy/_local.py": ("accuracy/test_accuracy.py", "accuracy/test_plan.py"),
    "accuracy/_result.py": ("estimates/test_contract.py",),
    "accuracy/_shapes.py": ("accuracy/test_accuracy.py",),
    "accuracy/_simulation.py": ("accuracy/test_accuracy.py", "accuracy/test_plan.py"),
    "amplification/_accounting.py": ("amplification/test_amplification.py", "amplification/test_composition.py"),
    "amplification/_binomial.py": ("amplification/test_amplification.py",),
    "amplification/_channel.py": ("amplification/test_amplification.py", "amplification/test_composition.py"),
    "amplification/_checks.py": ("amplification/test_amplification.py", "amplification/test_composition.py"),
    "amplification/_closed_form.py": ("amplification/test_amplification.py",),
    "amplification/_lower_bound.py": ("amplification/test_composition.py",),
    "amplification/_reduction.py": ("amplification/test_amplification.py",),
    "amplification/_reference.py": ("amplification/test_amplification.py",),
    "amplification/_structured.py": ("amplification/test_amplification.py", "amplification/test_composition.py"),
    "audit/_black_box.py": ("audit/test_audit.py", "audit/test_audit_adversarial.py"),
    "audit/_draws.py": ("audit/test_audit.py", "audit/test_hash_family.py"),
    "audit/_events.py": ("audit/test_audit.py", "audit/test_audit_adversarial.py"),
    "audit/_given.py": ("audit/test_audit.py", "audit/test_audit_adversarial.py"),
    "audit/_inputs.py": ("audit/test_audit.py", "audit/test_audit_adversarial.py"),
    "audit/_neighbours.py": ("audit/test_central.py",),
    "audit/_randomizer.py": ("audit/test_audit.py", "audit/test_hash_family.py"),
    "audit/_result.py": ("audit/test_audit.py",),
    "audit/_run.py": ("audit/test_audit.py", "audit/test_audit_adversarial.py"),
    "audit/_side.py": ("audit/test_peers.py", "audit/test_audit.py"),
    "audit/_side_worker.py": ("audit/test_peers.py",),
    "budget/_account.py": ("budget/test_session.py", "test_client.py"),
    "budget/_planned.py": ("budget/test_session.py",),
    "budget/_statement.py": ("budget/test_session.py",),
    "central/dictionaries.py": ("central/test_pursuit.py",),
    "central/moments.py": ("central/test_polynomial.py",),
    "cli/_bounds.py": ("local/test_circular_campaign.py",),
    "cli/_campaign_rounds.py": ("serve/test_uncertainty.py",),
    "cli/_env.py": ("serve/test_operations.py",),
    "cli/_estimate_records.py": ("cli/test_records.py",),
    "cli/_explain.py": ("accuracy/test_accuracy.py",),
    "cli/_service_client.py": ("serve/test_uncertainty.py",),
    "confidence_sequences/_bennett.py": ("confidence_sequences/test_confidence_sequences.py",),
    "confidence_sequences/_boundary.py": ("confidence_sequences/test_confidence_sequences.py",),
    "confidence_sequences/_distribution.py": ("confidence_sequences/test_confidence_sequences.py",),
    "confidence_sequences/_frequency.py": ("confidence_sequences/test_confidence_sequences.py",),
    "confidence_sequences/_results.py": ("confidence_sequences/test_confidence_sequences.py",),
    "confidence_sequences/_unary.py": ("confidence_sequences/test_confidence_sequences.py",),
    "constraints.py": ("conformance/test_conformance.py", "docs/test_testing.py"),
    "datasets/_binning.py": ("datasets/test_datasets.py",),
    "datasets/_dataset.py": ("datasets/test_datasets.py", "datasets/test_npm.py"),
    "datasets/files.py": ("datasets/test_datasets.py", "cli/test_errors.py"),
    "datasets/flights3m.py": ("datasets/test_npm.py",),
    "datasets/real.py": ("datasets/test_datasets.py", "experiments/test_experiments.py"),
    "datasets/synthetic.py": ("accuracy/test_accuracy.py",),
    "demo/_comparison.py": ("cli/test_basic.py",),
    "demo/_flights.py": ("demo/test_campaign.py", "cli/test_basic.py"),
    "distributed/_parts.py": ("distributed/test_spark.py", "distributed/test_dask.py"),
    "distributed/blocks.py": ("distributed/test_spark.py", "distributed/test_dask.py"),
    "errors.py": ("central/test_common.py", "frame/test_frame.py"),
    "estimates/__init__.py": ("estimates/test_contract.py", "central/test_common.py"),
    "estimates/_band.py": ("estimates/test_contract.py",),
    "estimates/_boxes.py": ("local/multi/test_grids.py",),
    "estimates/_drawing.py": ("estimates/test_contract.py", "cli/test_basic.py"),
    "estimates/_heavy_hitters.py": ("estimates/test_contract.py", "central/test_common.py"),
    "estimates/_intervals.py": ("estimates/test_contract.py",),
    "estimates/_maxent.py": ("local/multi/test_grids.py",),
    "estimates/_means.py": ("estimates/test_contract.py", "central/test_common.py"),
    "estimates/_presented.py": ("estimates/test_contract.py", "test_documents.py"),
    "estimates/_quantiles.py": ("central/test_joint_exp.py", "estimates/test_contract.py"),
    "estimates/_ranges.py": ("estimates/test_contract.py", "central/test_common.py"),
    "estimates/_reading.py": ("estimates/test_distribution.py", "estimates/test_contract.py"),
    "estimates/_released.py": ("estimates/test_contract.py", "central/test_common.py"),
    "estimates/_schema.py": ("estimates/test_contract.py", "test_documents.py"),
    "estimates/_text.py": ("estimates/test_distribution.py", "estimates/test_contract.py"),
    "experiments/_checks/_rows.py": ("experiments/checks/test_checks.py", "experiments/test_claims.py"),
    "experiments/_checks/bands.py": ("experiments/checks/test_checks.py", "experiments/test_claims.py"),
    "experiments/_checks/composite.py": ("reproductions/sw_ems/test_spec.py", "experiments/checks/test_checks.py"),
    "experiments/_checks/contrasts.py": ("experiments/checks/test_checks.py", "reproductions/central/test_spec.py"),
    "experiments/_checks/curves.py": ("experiments/checks/test_checks.py", "reproductions/central/test_spec.py"),
    "experiments/_checks/pairs.py": ("reproductions/sw_ems/test_spec.py", "experiments/checks/test_checks.py"),
    "experiments/_checks/rivals.py": ("experiments/checks/test_checks.py", "reproductions/central/test_spec.py"),
    "experiments/_checks/spread.py": ("experiments/checks/test_checks.py", "reproductions/sw_ems/test_spec.py"),
    "experiments/_methods.py": ("docs/test_doc_snippets.py", "experiments/test_experiments.py"),
    "experiments/_pagerecord.py": ("experiments/test_pagecheck.py",),
    "experiments/_pages.py": ("experiments/test_pagecheck.py",),
    "experiments/_plan.py": ("cli/test_experiments.py",),
    "experiments/_plots.py": ("experiments/test_experiments.py",),
    "experiments/_registry.py": ("reproductions/wiener/test_spec.py", "experiments/test_reproduce_flights3m.py"),
    "experiments/_report.py": ("experiments/test_experiments.py",),
    "experiments/_reproduce.py": ("experiments/test_claims.py", "experiments/test_pagecheck.py"),
    "experiments/_runlog.py": ("experiments/test_experiments.py", "distributed/test_dask.py"),
    "experiments/_runner.py": ("experiments/test_experiments.py", "distributed/test_dask.py"),
    "experiments/_spec.py": ("experiments/test_experiments.py", "reproductions/wavelet/test_spec.py"),
    "experiments/_specpage.py": ("experiments/test_pagecheck.py",),
    "experiments/_table.py": ("experiments/test_experiments.py", "reproductions/wavelet/test_spec.py"),
    "frame/_grouped.py": ("frame/test_frame.py", "frame/test_local.py"),
    "io.py": ("cli/test_cli_consistency.py", "io/test_state_file.py"),
    "issuer/_limits.py": ("issuer/test_app.py", "relay/test_identity.py"),
    "issuer/_store.py": ("issuer/test_app.py", "relay/test_identity.py"),
    "local/_autoload.py": ("local/multi/test_auto.py", "package/test_shared_rules.py"),
    "local/_deconvolution/permutation.py": ("local/test_deconvolution.py",),
    "local/_deconvolution/smoothing.py": ("local/test_deconvolution.py",),
    "local/_deconvolution/spectra.py": ("local/test_deconvolution.py",),
    "local/_deconvolution/wiener.py": ("local/test_deconvolution.py",),
    "local/_docs.py": ("testing/test_checks.py", "testing/test_declared.py"),
    "local/_json_rows.py": ("test_client.py", "serve/test_app.py"),
    "local/_report_kinds.py": ("testing/test_checks.py",),
    "local/_unset_cell.py": ("local/numerical/test_wavelet.py", "local/frequency/test_ss.py"),
    "local/_walsh_hadamard.py": ("local/frequency/test_hr.py", "local/numerical/test_haar_hrr.py"),
    "local/frequency/_bucket_client.py": ("local/frequency/test_dbitflippm.py", "local/frequency/test_loloha.py"),
    "local/frequency/_hashing.py": ("local/frequency/test_olh.py", "audit/test_hash_family.py"),
    "local/frequency/_joint_blocks.py": ("local/test_joint.py",),
    "local/frequency/_local_hashing.py": ("local/frequency/test_flh.py", "local/frequency/test_auto.py"),
    "local/frequency/_matching_pursuit.py": ("local/frequency/test_cp.py",),
    "local/frequency/_memoized.py": ("local/test_ledger.py", "testing/test_checks.py"),
    "local/frequency/_sketch.py": ("local/frequency/test_cms.py", "local/frequency/test_hcms.py"),
    "local/frequency/_unary.py": ("local/frequency/test_feasibility.py", "confidence_sequences/test_confidence_sequences.py"),
    "local/keyvalue/_padded.py": ("local/keyvalue/test_base.py",),
    "local/keyvalue/_result.py": ("estimates/test_contract.py",),
    "local/keyvalue/_sampling.py": ("local/keyvalue/test_base.py",),
    "local/keyvalue/_sets.py": ("local/keyvalue/test_base.py", "local/keyvalue/test_pckv_ue.py"),
    "local/multi/_adaptive_grid.py": ("local/multi/test_pripl.py",),
    "local/multi/_covariance.py": ("local/multi/test_calm.py",),
    "local/multi/_fake.py": ("local/multi/test_base.py",),
    "local/multi/_grid_estimate.py": ("local/multi/test_grids.py",),
    "local/multi/_groups.py": ("local/multi/test_base.py",),
    "local/multi/_inner.py": ("local/multi/test_base.py",),
    "local/multi/_marginals.py": ("local/multi/test_calm.py",),
    "local/multi/_pl_fit.py": ("local/multi/test_pripl.py",),
    "local/multi/_pripl_tree.py": ("local/multi/test_pripl.py",),
    "local/multi/_records.py": ("local/multi/test_pripl.py", "estimates/test_contract.py"),
    "local/multi/_result.py": ("estimates/test_contract.py",),
    "local/multi/_sampling.py": ("local/multi/test_auto.py", "local/multi/test_base.py"),
    "local/multi/_schema.py": ("local/multi/test_auto.py", "local/multi/test_pripl.py"),
    "local/multi/_values.py": ("local/multi/test_pripl.py", "estimates/test_contract.py"),
    "local/numerical/_composite.py": ("test_uncertainty.py", "local/frequency/test_exact_channel.py"),
    "local/numerical/_haar.py": ("local/numerical/test_wavelet.py",),
    "local/numerical/_haar_design.py": ("local/numerical/test_wavelet.py", "reproductions/wavelet/test_spec.py"),
    "local/numerical/_signed_subset.py": ("local/numerical/test_wavelet.py", "local/test_bernoulli.py"),
    "local/numerical/_tree.py": ("local/numerical/test_hh.py",),
    "local/numerical/_wave_discrete.py": ("estimates/test_contract.py",),
    "local/numerical/_wave_grid.py": ("local/numerical/test_sw.py",),
    "local/numerical/_wave_operators.py": ("local/numerical/test_sw.py",),
    "local/numerical/_wave_protocol.py": ("confidence_sequences/test_confidence_sequences.py", "estimates/test_contract.py"),
    "local/numerical/_wave_shape.py": ("local/numerical/test_gw.py", "local/numerical/test_sw.py"),
    "local/numerical/_window_grid.py": ("local/numerical/test_opm.py",),
    "metrics/_cdfs.py": ("metrics/test_distances.py", "local/numerical/test_opm.py"),
    "metrics/_frequencies.py": ("metrics/test_distances.py", "local/frequency/test_oracle.py"),
    "metrics/_statistics.py": ("metrics/test_distances.py", "reproductions/sw_ems/test_spec.py"),
    "plotting.py": ("serve/test_estimate_cache.py", "cli/test_basic.py"),
    "privacypass/_blindrsa.py": ("privacypass/test_privacypass.py",),
    "privacypass/_client.py": ("issuer/test_app.py", "privacypass/test_privacypass.py"),
    "privacypass/_http_auth.py": ("privacypass/test_privacypass.py", "issuer/test_app.py"),
    "privacypass/_messages.py": ("privacypass/test_privacypass.py", "relay/test_identity.py"),
    "privacypass/_token_key.py": ("privacypass/test_privacypass.py", "issuer/test_app.py"),
    "privacypass/_verify.py": ("privacypass/test_privacypass.py", "issuer/test_app.py"),
    "relay/_queue.py": ("relay/test_arguments.py", "relay/test_identity.py"),
    "reproductions/central/checks.py": ("reproductions/central/test_spec.py", "experiments/test_experiments.py"),
    "reproductions/central/methods.py": ("reproductions/central/test_spec.py",),
    "reproductions/cp/methods.py": ("reproductions/cp/test_spec.py",),
    "reproductions/sw_ems/checks.py": ("reproductions/sw_ems/test_spec.py",),
    "reproductions/sw_ems/methods.py": ("reproductions/sw_ems/test_spec.py",),
    "reproductions/toy/spec.py": ("experiments/test_experiments.py",),
    "reproductions/wavelet/checks.py": ("reproductions/wavelet/test_spec.py", "experiments/test_claims.py"),
    "reproductions/wavelet/methods.py": ("reproductions/wavelet/test_spec.py",),
    "reproductions/wiener/checks.py": ("reproductions/wiener/test_spec.py",),
    "reproductions/wiener/methods.py": ("reproductions/wiener/test_spec.py", "experiments/checks/test_checks.py"),
    "serve/_assets.py": ("serve/test_schema.py", "demo/test_campaign.py"),
    "serve/_deltas.py": ("serve/test_serve_scale.py", "local/test_aggregator.py"),
    "serve/_diagnostics.py": ("serve/test_serve_abuse.py", "local/frequency/test_feasibility.py"),
    "serve/_explain.py": ("accuracy/test_accuracy.py",),
    "serve/_group.py": ("serve/test_serve_recreate.py", "serve/test_serve_scale.py"),
    "serve/_health.py": ("serve/test_limits.py",),
    "serve/_metrics.py": ("serve/test_limits.py",),
    "serve/_middleware.py": ("serve/test_fast_batches.py", "serve/test_limits.py"),
    "serve/_openapi.py": ("serve/test_schema.py", "serve/test_limits.py"),
    "serve/_refusals.py": ("serve/test_estimator.py", "serve/test_app.py"),
    "serve/_relay_route.py": ("test_client.py", "cli/test_serve.py"),
    "serve/_routes/_common.py": ("serve/test_fast_batches.py",),
    "serve/_routes/campaigns.py": ("serve/test_schema.py", "serve/test_serve_recreate.py"),
    "serve/_routes/pages.py": ("serve/test_schema.py", "serve/test_serve_recreate.py"),
    "serve/_routes/results.py": ("serve/test_schema.py", "serve/test_serve_recreate.py"),
    "serve/_service.py": ("serve/test_schema.py", "serve/test_serve_recreate.py"),
    "serve/_shared_reads.py": ("serve/test_serve_recreate.py",),
    "serve/_token_store.py": ("test_client.py", "cli/test_serve.py"),
    "serve/_workers.py": ("serve/test_limits.py",),
    "testing/__init__.py": ("testing/test_checks.py", "conformance/test_conformance.py"),
    "testing/_inputs.py": ("clients/test_js_client.py", "clients/test_js_conformance.py"),
    "testing/_poisoning.py": ("local/frequency/test_recovery.py", "cli/test_cli_recover.py"),
}

#: test files that check several modules together and are not split yet: what each checks across them
NOT_YET_MIRRORED: dict[str, str] = {
    "accounting/test_exact_bounds.py": "every accountant between an exact composition and basic composition, beyond GRR",
    "audit/test_audit_adversarial.py": "the auditor against randomizers that try to fool or break it (black box, events, run)",
    "audit/test_audit_mutations.py": "single-probability bugs injected into copies of protocols, each certified to violate",
    "cli/test_cli_consistency.py": "Python and the command line give the same numbers (deploy, records, estimate)",
    "cli/test_cli_recover.py": "estimate --state --recover: the command line over frequency._recovery and testing._poisoning",
    "estimates/test_coverage.py": "a slice of the coverage matrix of docs/uncertainty.md: local and central bands",
    "experiments/test_reproduce_flights3m.py": "three reproductions' size-sensitive claims on the flights3m dataset",
    "local/test_circular_campaign.py": "a time-of-day campaign end to end: opm-circular, the command line and the service",
    "local/test_clipping.py": "clipping in every numerical protocol and the command line",
    "local/test_labels.py": "categorical data by label: the config, privatize, estimate and the command line",
    "local/test_safe_defaults.py": "safe defaults across central and local releases: the CSPRNG, the epsilon range, bools",
    "serve/test_dashboard.py": "the dashboard in Chromium (Selenium) against the API: the pages, the estimates, the service",
    "serve/test_multi_deploy.py": "multi-attribute protocols deployed: report files, states, merges and the service",
    "serve/test_serve_abuse.py": "the service's defences: memory, time, connections, injected reports, poisoning",
    "serve/test_serve_crash.py": "kill -9 of the service while clients submit: nothing lost, nothing twice",
    "serve/test_serve_recreate.py": "a campaign deleted and created again by another process, its cache and store",
    "serve/test_serve_scale.py": "the service at scale: group commits, the log of changes, backpressure, workers",
}
