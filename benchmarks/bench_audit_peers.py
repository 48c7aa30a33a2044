"""The peers' history as a benchmark: dpdist.audit on the released versions of other libraries.

Two published bugs shipped in local randomizers of other libraries:

* OpenDP's ``make_randomized_response_bitvec`` never randomized the last bit of the vector before
  0.15.0 (opendp/opendp#2708): audited on 0.14.2 (the last release before 0.15.0) and the current release;
* pure-LDP's unary encoding (``UEClient``) did not keep the true bit with probability p before 1.2.0
  (Samuel-Maddock/pure-LDP#11, found by the audit of Arcolezi & Gambs 2023, arXiv:2309.01597):
  audited on 1.1.2 (the last release before 1.2.0) and 1.2.0;

and multi-freq-ldpy's GRR and OUE (current release) as controls.  Each (library, version) gets a side
virtual environment under ``~/.cache/dpdist/audit-peers/<lib>-<version>`` (``uv venv`` + ``uv pip install
<lib>==<version>`` + this checkout, editable), and the audit runs there in a subprocess with the adapter of
:mod:`dpdist.audit.peers`, at alpha 0.001 (confidence 0.999), recording the claim, the certified bound, the
samples and the CPU seconds of the audit (``time.process_time`` around ``audit``: imports excluded).

This benchmark downloads the packages (once: the environments are kept); no test does.  Usage::

    uv run python benchmarks/bench_audit_peers.py [--samples 10000] [--markdown]

Writes benchmarks/results/audit_peers.json.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
CACHE = pathlib.Path(os.environ.get("DPDIST_AUDIT_PEERS_CACHE", "~/.cache/dpdist/audit-peers")).expanduser()
ALPHA = 0.001

# pure-LDP imports its RAPPOR server (scikit-learn, statsmodels) from ``pure_ldp.frequency_oracles``
# without declaring them: they are installed beside it.
PURE_LDP_EXTRAS = ["scikit-learn", "statsmodels"]

# (package, version, adapter expression in dpdist.audit.peers, seed or None, the published status, extras)
CASES = [
    ("opendp", "0.14.2", "peers.opendp_bitvector(16, f=0.5)", None, "affected (before 0.15.0)", []),
    ("opendp", "0.16.0", "peers.opendp_bitvector(16, f=0.5)", None, "fixed (current)", []),
    ("pure-ldp", "1.1.2", "peers.pure_ldp_unary_encoding(8, epsilon=1.0)", 3, "affected (before 1.2.0)", PURE_LDP_EXTRAS),
    ("pure-ldp", "1.2.0", "peers.pure_ldp_unary_encoding(8, epsilon=1.0)", 3, "fixed (current)", PURE_LDP_EXTRAS),
    ("multi-freq-ldpy", "0.2.5", "peers.multi_freq_ldpy_grr(8, epsilon=1.0)", 4, "control (current)", []),
    ("multi-freq-ldpy", "0.2.5", "peers.multi_freq_ldpy_ue(8, epsilon=1.0)", 5, "control (current)", []),
]

CHILD = """
import importlib.metadata, json, sys, time
from dpdist.audit import audit, peers
randomizer = {adapter}
started = time.process_time()
result = audit(randomizer, samples={samples}, alpha={alpha}, rng={seed})
cpu = time.process_time() - started
print(json.dumps({{"installed": importlib.metadata.version({package!r}), "mechanism": result.name,
                  "claimed": result.claimed_epsilon, "certified": result.certified_epsilon,
                  "witness_power_loss": result.witness_power_loss,
                  "smallest_examined_probability": result.smallest_examined_probability, "confidence": result.confidence,
                  "samples_per_input": result.samples_per_input, "samples": result.samples,
                  "inputs": result.inputs, "witness": result.to_dict().get("witness"), "verdict": result.verdict,
                  "cpu_seconds": cpu}}, default=str))
"""


def environment(package: str, version: str, extras: list[str]) -> pathlib.Path:
    """The side environment's python for ``package==version`` (created and installed once)."""
    place = CACHE / f"{package}-{version}"
    python = place / "bin" / "python"
    stamp = place / ".dpdist-installed"
    if not stamp.exists():
        subprocess.run(["uv", "venv", "-q", "--python", "3.11", str(place)], check=True)
        env = dict(os.environ, VIRTUAL_ENV=str(place))
        install = subprocess.run(["uv", "pip", "install", "-q", f"{package}=={version}", *extras, "-e", str(REPO)],
                                 env=env, capture_output=True, text=True)
        if install.returncode != 0:
            raise RuntimeError(f"installing {package}=={version} failed: {install.stderr.strip()}")
        stamp.write_text(f"{package}=={version}\n")
    return python


def installed(package: str) -> str | None:
    """The version of ``package`` installed beside dpdist here (None: not installed)."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def run(case, samples: int, installed_only: bool = False) -> dict:
    """One case's row: the audit in a side environment of ``package==version`` (with ``installed_only``, in this
    interpreter when it has that version, else the row says it was skipped)."""
    package, version, adapter, seed, status, extras = case
    row = {"package": package, "version": version, "status": status, "adapter": adapter, "alpha": ALPHA, "seed": seed}
    if installed_only:
        if installed(package) != version:
            return {**row, "skipped": f"{package}=={version} is not installed here (--installed-only)"}
        python = pathlib.Path(sys.executable)
    else:
        try:
            python = environment(package, version, extras)
        except (RuntimeError, subprocess.CalledProcessError) as error:
            return {**row, "error": str(error)}
    child = CHILD.format(adapter=adapter, samples=samples, alpha=ALPHA, seed=seed, package=package)
    done = subprocess.run([str(python), "-c", child], capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        return {**row, "error": done.stderr.strip().splitlines()[-1]}
    return {**row, **json.loads(done.stdout.strip().splitlines()[-1])}


def markdown(rows: list[dict]) -> str:
    lines = ["| library | version | status | mechanism | claim | certified | confidence | outputs per input | CPU s | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r or "skipped" in r:
            note = f"error: {r['error']}" if "error" in r else f"skipped: {r['skipped']}"
            lines.append(f"| {r['package']} | {r['version']} | {r['status']} | {r['adapter']} | | | | | | {note} |")
            continue
        lines.append(f"| {r['package']} | {r['installed']} | {r['status']} | {r['mechanism']} | {r['claimed']:.3f} | "
                     f"{r['certified']:.3f} | {r['confidence']:.3f} | {r['samples_per_input']:,} | {r['cpu_seconds']:.1f} | "
                     f"{r['verdict']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000, help="the audit's budget of outputs per input")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--installed-only", action="store_true",
                        help="only the versions installed beside dpdist, in this interpreter (no side environment made)")
    parser.add_argument("--packages", default=None, help="comma-separated packages to audit (default: every case's)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    rows = []
    for case in CASES:
        if args.packages is None or case[0] in args.packages.split(","):
            rows.append(run(case, args.samples, args.installed_only))
        print(json.dumps(rows[-1]), flush=True)
    record = {"date": datetime.date.today().isoformat(), "python": sys.version.split()[0],
              "load_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)], "samples": args.samples, "rows": rows}
    out = REPO / "benchmarks" / "results" / "audit_peers.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    if args.markdown:
        print(markdown(rows))


if __name__ == "__main__":
    main()
