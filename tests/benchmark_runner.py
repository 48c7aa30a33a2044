"""Runs benchmark scripts at their smallest case, all in this one process (``python tests/benchmark_runner.py SPEC OUT``).

SPEC is a JSON file ``{"root": <a scratch copy of the checkout's benchmarks/ and docs/>, "cases": {script: {"argv": [...],
"set": {NAME: value}}}}``: each script is loaded from the copy as ``python <copy>/<script>`` would load it, the module
constants named in ``set`` are replaced (the sizes of a script without a size option: its rows are computed by its own
code, only fewer), ``sys.argv`` is the script's path and ``argv``, then its ``main`` runs, with its working folder its
own scratch folder and its standard output captured.  A script that raises (or exits non-zero) is recorded with the
error's last lines; the others go on.  OUT receives ``{script: {"error": str | None, "stdout": str, "cpu_s": float}}``
(``cpu_s``: this process's and its children's CPU seconds while the script ran).

Run from the copy, never from benchmarks/: many scripts write their results next to themselves
(``Path(__file__).parent / "results"``) or to docs/, and a smoke case is not a result.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import resource
import sys
import traceback
from pathlib import Path


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_one(root: Path, script: str, case: dict) -> dict:
    """Load ``script`` from ``root``, apply the case and call its ``main``; the outcome (never raises)."""
    path = root / script
    name = path.stem  # as the script's own name: a sibling importing it (bench_multi_ranges_1d) gets the same module
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    work = root.parent / "work" / path.stem
    work.mkdir(parents=True, exist_ok=True)
    captured = io.StringIO()
    error = None
    start = _cpu()
    previous = os.getcwd()
    try:
        os.chdir(work)
        with contextlib.redirect_stdout(captured):
            spec.loader.exec_module(module)
            for constant, value in case.get("set", {}).items():
                if not hasattr(module, constant):
                    raise AttributeError(f"the smoke case sets {constant}, which {script} does not define")
                old = getattr(module, constant)
                setattr(module, constant, tuple(value) if isinstance(old, tuple) and isinstance(value, list) else value)
            sys.argv = [str(path), *case.get("argv", [])]
            main = module.main
            main(sys.argv) if case.get("argv_to_main") else main()
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            error = f"SystemExit({exit_.code!r})"
    except BaseException:  # noqa: BLE001 - every failure is recorded by name and the next script runs
        error = "".join(traceback.format_exc().splitlines(keepends=True)[-12:])
    finally:
        os.chdir(previous)
    return {"error": error, "stdout": captured.getvalue(), "cpu_s": round(_cpu() - start, 2)}


def main() -> None:
    spec_path, out_path = Path(sys.argv[1]), Path(sys.argv[2])  # sys.argv becomes each script's
    spec = json.loads(spec_path.read_text())
    root = Path(spec["root"])
    sys.path.insert(0, str(root))  # as `python <root>/<script>` puts the script's folder first
    outcomes = {}
    for script, case in spec["cases"].items():
        outcomes[script] = run_one(root, script, case)
        print(f"{script}: {outcomes[script]['cpu_s']} CPU s{' FAILED' if outcomes[script]['error'] else ''}",
              file=sys.stderr, flush=True)
        out_path.write_text(json.dumps(outcomes))  # what ran so far, should a script kill the process


if __name__ == "__main__":
    main()
