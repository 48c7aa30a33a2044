"""The release artefacts: one version, an sdist and a pure-Python wheel that pass ``twine check``, and a wheel
that installs with every extra into a fresh virtual environment and runs the command line's main paths there
(``demo``, ``estimate``, ``release``, ``serve`` + ``campaign`` + ``submit``, ``relay``).

The slow tests build with ``uv build`` (the release command, ``docs/how-to/release.md``) and install from PyPI, pinned to
the versions of ``uv.lock`` (``uv export``), so that the install is reproducible.  The wheel without extras is
installed as a user's ``pip install`` does (``python -m venv``, then ``pip``): pip's resolver and installer, and
the hint ``pip install 'dpdist[serve]'`` the command line prints.  The wheel with every extra is installed by
``uv pip install`` into a ``uv venv``: the wheel's ``Requires-Dist`` with every extra resolved under the same
constraints, its entry points installed, and ``uv pip check`` of the result, from uv's cache, which links the
~2 GB instead of unpacking them (pip spent ~30 CPU-s there).  Every server listens on 127.0.0.1 on a free port and is
stopped by the test; every command has a time limit.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import httpx
import numpy as np
import pytest

import dpdist
from dpdist.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "js"
ADMIN_TOKEN = "release-admin-token-0123456789"
RELAY_TOKEN = "release-relay-token-0123456789"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_one_version_for_the_wheel_the_command_line_the_clients_and_the_changelog(capsys):
    project = _pyproject()
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "src/dpdist/__init__.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?", dpdist.__version__)
    assert json.loads((CLIENT / "package.json").read_text())["version"] == dpdist.__version__
    java = (ROOT / "clients" / "java" / "src" / "main" / "java" / "org" / "dpdist" / "client" / "DpDist.java").read_text()
    assert re.search(r'String VERSION = "([^"]+)"', java)[1] == dpdist.__version__  # the jar's name and DpDist.VERSION
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"dpdist {dpdist.__version__}"
    versions = [name for name in _changelog_sections() if name != "Unreleased"]
    assert versions and versions[0] == dpdist.__version__, versions[:2]  # the newest version's section is this one


def _changelog_sections() -> list[str]:
    """The names of CHANGELOG.md's version sections (``## [0.1.0] - 2026-12-01``), newest first."""
    return re.findall(r"^## \[([^\]]+)\]", (ROOT / "CHANGELOG.md").read_text(), flags=re.MULTILINE)


def test_the_changelog_keeps_a_changelog_a_user_reads():
    """Keep a Changelog's form: "Unreleased" first, then one section per version, newest first, each holding only
    the kinds of change a user looks for; no longer than a reader goes through, and no history of the project's own
    process (that is in git)."""
    text = (ROOT / "CHANGELOG.md").read_text()
    assert len(text.splitlines()) <= 400
    sections = _changelog_sections()
    assert sections[0] == "Unreleased" and sections.count("Unreleased") == 1
    assert all(re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?", name) for name in sections[1:]), sections
    for heading in re.findall(r"^## (.+)$", text, flags=re.MULTILINE):
        assert re.fullmatch(r"\[Unreleased\]|\[[^\]]+\] - (?:\d{4}-\d\d-\d\d|not yet released)", heading), heading
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.MULTILINE))
    assert kinds and kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds
    process = r"attack ?[0-9]|issue [0-9]+|re[a]ttack|outs[i]der|newcomer[0-9]"  # (bracketed: this line is no hit)
    assert not re.search(process, text, flags=re.IGNORECASE)


def test_the_metadata_states_what_twine_and_pypi_show():
    project = _pyproject()["project"]
    assert project["license"] == "BSD-3-Clause" and (ROOT / "LICENSE").is_file()
    assert "readme" in project["dynamic"]  # the README with absolute links (hatch-fancy-pypi-readme)
    hook = _pyproject()["tool"]["hatch"]["metadata"]["hooks"]["fancy-pypi-readme"]
    # the README in two fragments around its block that is true only before the upload
    assert hook["content-type"] == "text/markdown" and hook["fragments"] == [
        {"path": "README.md", "end-before": "<!-- pypi-description: skip start"},
        {"path": "README.md", "start-after": "<!-- pypi-description: skip end -->\n"},
    ]
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(project["urls"])
    # the Python classifiers start at requires-python's floor
    floor = re.fullmatch(r">=3\.(\d+)", project["requires-python"]).group(1)
    versions = sorted(int(c.rsplit(".", 1)[1]) for c in project["classifiers"]
                      if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert versions[0] == int(floor) and versions == list(range(versions[0], versions[-1] + 1))
    # every extra is installed by the dev group (so the tests see what users install)
    dev = " ".join(_pyproject()["dependency-groups"]["dev"])
    extras = set(re.search(r"dpdist\[([^\]]+)\]", dev).group(1).split(","))
    assert set(project["optional-dependencies"]) - {"bench"} <= extras


# ---------------------------------------------------------------------- built artefacts (slow)
def _run(command, *, timeout=600, check=True, **kwargs):
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=timeout, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} exited {result.returncode}:\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        (pytest.fail if os.environ.get("CI") else pytest.skip)("uv is not installed")
    return uv


@pytest.fixture(scope="module")
def artefacts(tmp_path_factory):
    """``uv build``: the sdist, and the wheel built from it."""
    out = tmp_path_factory.mktemp("dist")
    _run([_uv(), "build", "--out-dir", out, ROOT], cwd=ROOT)
    (sdist,) = out.glob("dpdist-*.tar.gz")
    (wheel,) = out.glob("dpdist-*.whl")
    return sdist, wheel


@pytest.mark.slow
def test_twine_check_passes_on_both_artefacts(artefacts):
    twine = _run([sys.executable, "-m", "twine", "check", "--strict", *artefacts])
    assert twine.stdout.count("PASSED") == 2, twine.stdout


@pytest.mark.slow
def test_the_wheel_is_pure_python_and_carries_what_the_package_reads_at_run_time(artefacts):
    sdist, wheel = artefacts
    assert wheel.name == f"dpdist-{dpdist.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    js = "dpdist/serve/_clients_js/"
    client = {f"{js}src/{path.relative_to(CLIENT / 'src').as_posix()}" for path in (CLIENT / "src").rglob("*")
              if path.is_file()}
    assert client <= names and f"{js}participate.html" in names  # what dpdist serve serves
    assert {"dpdist/py.typed", "dpdist/demo/_data/departure_minutes.npz", "dpdist/demo/_devices.mjs"} <= names
    web = Path(dpdist.__path__[0]) / "serve" / "_web"  # the service's pages: templates, scripts and styles
    assert {f"dpdist/serve/_web/{path.relative_to(web).as_posix()}" for path in web.rglob("*") if path.is_file()} <= names
    assert f"dpdist-{dpdist.__version__}.dist-info/licenses/LICENSE" in names
    source = set(Path(path).relative_to(dpdist.__path__[0]).as_posix() for path in
                 map(str, Path(dpdist.__path__[0]).rglob("*.py")) if "_clients_js" not in path)
    assert {f"dpdist/{path}" for path in source} <= names
    assert not any(name.startswith(("tests/", "docs/", "benchmarks/", "clients/")) for name in names)
    with tarfile.open(sdist) as archive:
        members = {member.name.split("/", 1)[1]: member for member in archive.getmembers() if "/" in member.name}
    assert "clients/js/src/index.js" in members and "clients/js/participate.html" in members
    assert {name.split("/", 1)[0] for name in members} <= {*_sdist_entries(), "PKG-INFO"}  # nothing else of the checkout
    assert not any(member.issym() or member.islnk() for member in members.values())  # links do not survive sdists
    metadata = zipfile.ZipFile(wheel).read(f"dpdist-{dpdist.__version__}.dist-info/METADATA").decode()
    assert "Metadata-Version: 2.4" in metadata and "License-Expression: BSD-3-Clause" in metadata
    assert "Description-Content-Type: text/markdown" in metadata
    assert "](https://github.com/dpdist/dpdist/blob/main/docs/tutorials/index.md)" in metadata  # absolute links on PyPI


def _sdist_entries() -> list[str]:
    return _pyproject()["tool"]["hatch"]["build"]["targets"]["sdist"]["only-include"]


def test_the_sdist_holds_the_top_level_entries_git_tracks_and_no_other():
    """The sdist holds only what ``only-include`` names, which must be every top-level entry git tracks: hatch's
    ignore rules alone let in files a checkout holds (the quickstart's answers.csv and campaigns.sqlite at its root),
    and an entry added and not named would be missing from the sdist."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run([git, "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert sorted({path.split("/", 1)[0] for path in tracked}) == sorted(_sdist_entries())


def _extras(wheel: Path) -> list[str]:
    metadata = zipfile.ZipFile(wheel).read(f"dpdist-{dpdist.__version__}.dist-info/METADATA").decode()
    return sorted(re.findall(r"^Provides-Extra: (\S+)$", metadata, flags=re.MULTILINE))


def _venv(path: Path, wheel: Path, extras: list[str], constraints: Path) -> Path:
    """A fresh virtual environment (``python -m venv``) with the wheel installed by ``pip``; its ``bin``.

    ``--no-compile``: pip does not byte-compile what it unpacks (most of it never imported here); Python compiles
    the modules the commands import when they import them, as after any ``--no-compile`` install.  What is
    resolved, downloaded and installed is the same."""
    _run([sys.executable, "-m", "venv", path])
    python = path / "bin" / "python"
    spec = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    _run([python, "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check", "-c", constraints,
          spec],
         timeout=1800)
    return path / "bin"


def _uv_venv(path: Path, wheel: Path, extras: list[str], constraints: Path) -> Path:
    """A fresh virtual environment (``uv venv``, no ``--system-site-packages``) with the wheel and ``extras``
    installed by ``uv pip install``; its ``bin``.

    uv resolves the wheel's ``Requires-Dist`` with its extras under ``constraints`` as pip does, and links the
    distributions from its cache (filled by the ``uv sync`` of this checkout) instead of unpacking them.  It
    resolves offline first, from the index pages it cached: ``constraints`` pin every version, so the cache
    gives the same resolution as the registry, and no cached file is downloaded and unpacked (or, for PySpark's
    sdist, built) again where a registry's responses revalidate as changed.  A cache without these versions
    (a fresh CI machine) fails offline, and then the install asks the registry.  Run outside the checkout
    (``cwd``), so that no ``[tool.uv]`` setting of this project applies."""
    _run([_uv(), "venv", "--quiet", "--python", sys.executable, path], cwd=path.parent)
    spec = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    install = [_uv(), "pip", "install", "--quiet", "--python", path / "bin" / "python", "--no-compile-bytecode",
               "-c", constraints, spec]
    if _run([*install, "--offline"], cwd=path.parent, timeout=1800, check=False).returncode != 0:
        _run(install, cwd=path.parent, timeout=1800)
    return path / "bin"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def _server(command, env, url: str, log: Path):
    """A server of the installed wheel, in its own process group; yields when ``url/healthz`` answers 200.  It is
    stopped when the block ends, and by ``timeout`` after 10 minutes whatever happens to this test."""
    command = [shutil.which("timeout") or "timeout", "600", *command]
    with open(log, "wb") as output:
        process = subprocess.Popen([str(part) for part in command], env=env, stdout=output, stderr=output,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, f"{command[3]} exited {process.returncode}: {log.read_text()[-2000:]}"
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            assert time.monotonic() < deadline, f"{command[3]} did not answer /healthz in 90 s"
            time.sleep(0.2)
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
@pytest.mark.timeout(3600)  # installs from the registry on a fresh machine: 30 minutes an install, its own bound
def test_the_wheel_installs_with_every_extra_and_its_commands_run(artefacts, tmp_path):
    started = time.monotonic()
    _, wheel = artefacts
    extras = _extras(wheel)
    assert {"serve", "relay", "dask", "spark", "frame", "pandas", "polars", "deploy", "data"} <= set(extras)
    constraints = tmp_path / "constraints.txt"  # the versions this checkout is tested with (uv.lock)
    _run([_uv(), "export", "--frozen", "--all-extras", "--no-dev", "--no-emit-project", "--no-hashes", "-q",
          "-o", constraints], cwd=ROOT)
    work = tmp_path / "work"
    work.mkdir()
    bin_ = _uv_venv(tmp_path / "venv", wheel, extras, constraints)
    installed = time.monotonic() - started
    python, dpdist_ = bin_ / "python", bin_ / "dpdist"
    env = {**{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
           "PATH": f"{bin_}{os.pathsep}{os.environ['PATH']}", "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN,
           "DPDIST_RELAY_TOKEN": RELAY_TOKEN, "MPLBACKEND": "Agg"}

    def run(*arguments, timeout=300):
        return _run([dpdist_, *arguments], cwd=work, env=env, timeout=timeout)

    _run([_uv(), "pip", "check", "--python", python], cwd=tmp_path, env=env)
    assert run("--version").stdout.strip() == f"dpdist {dpdist.__version__}"
    where = _run([python, "-c", "import dpdist, dpdist.serve._assets as a; print(dpdist.__file__); "
                  "print(a.clients_js_dir())"], cwd=work, env=env).stdout.split()
    assert all(Path(path).is_relative_to(tmp_path / "venv") for path in where)  # the wheel's, not this checkout's
    assert (Path(where[1]) / "participate.html").is_file() and (Path(where[1]) / "src" / "index.js").is_file()

    _extras_used(python, work, env)
    _commands_on_a_csv(run, work)
    _served_from_the_wheel(dpdist_, run, work, env, tmp_path)
    print(f"\ninstall with {len(extras)} extras: {installed:.0f} s; whole test: {time.monotonic() - started:.0f} s")


def _extras_used(python, work, env) -> None:
    """Each extra's own code, imported and used where it is cheap, by the wheel's Python."""
    _run([python, "-c", """
import numpy as np, pandas as pd, polars as pl, pyarrow as pa, dask.array as da
from dpdist import distributed, frame, local
grr = local.make("grr", epsilon=1.0, domain_size=4)
values = np.arange(400) % 4
for table in (pd.DataFrame({"x": values}), pl.DataFrame({"x": values}).lazy(), pa.table({"x": values})):
    assert frame.estimate(table, "x", grr, rng=1).n == 400
assert distributed.simulate(grr, da.from_array(values, chunks=100), seed=1) == distributed.simulate_blocks(
    grr, [values[i:i + 100] for i in range(0, 400, 100)], seed=1)
from dpdist import datasets
assert datasets.get("flights-departure").load().size == 328_521  # the data extra's package, read as data
import dpdist.distributed.spark, pyspark, dpdist.serve, dpdist.relay, sphinx, opendp, diffprivlib
from dpdist._http import _telemetry
assert _telemetry.exportable({"OTEL_TRACES_EXPORTER": "otlp"}, "metrics") is False  # (asked for traces only)
assert _telemetry.exportable({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, "traces")  # the otel extra imports
"""], cwd=work, env=env)


def _commands_on_a_csv(run, work) -> None:
    """``demo`` (its shortest run), ``estimate`` and ``release`` on a CSV, by the wheel's command."""
    demo = run("demo", "--epsilons", "1", "--repeats", "1", "--out", "demo", timeout=600)
    assert any((work / "demo").iterdir()), demo.stdout
    generator = np.random.default_rng(0)
    with open(work / "people.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["age", "item"])
        writer.writerows(zip(np.round(generator.uniform(18, 90, 3000), 1), generator.integers(0, 8, 3000)))
    estimate = run("estimate", "people.csv", "--column", "age", "--protocol", "sw", "--epsilon", "1",
                   "--bounds", "0,100", "--plot", "age.png")
    assert "mean" in estimate.stdout and (work / "age.png").stat().st_size > 0
    release = run("release", "people.csv", "--column", "age", "--epsilon", "1", "--bounds", "0,100", "--json")
    released = json.loads(release.stdout)
    assert released["quantiles"]["guarantee"]["epsilon"] == 1.0 and "1-differential privacy" in released["guarantee"]


def _served_from_the_wheel(dpdist_, run, work, env, tmp_path) -> None:
    """``serve``: a campaign created then opened, a CSV submitted, its estimate; the page and client from the wheel;
    the relay in front of that collector starts and answers."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with _server([dpdist_, "serve", "--db", work / "c.sqlite", "--port", port, "--log-level", "warning"],
                 env, url, tmp_path / "serve.log"):
        run("campaign", "create", "--server", url, "--name", "items",
            "--config", json.dumps({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}))
        run("campaign", "open", "--server", url, "items")
        run("submit", "--server", url, "--campaign", "items", "people.csv", "--column", "item")
        document = json.loads(run("campaign", "estimate", "--server", url, "items", "--json").stdout)
        assert document["n"] == 3000
        page = httpx.get(url + "/campaigns/items/participate", timeout=30)
        assert page.status_code == 200 and page.text == (CLIENT / "participate.html").read_text()
        module = httpx.get(url + "/static/dpdist-client/index.js", timeout=30)
        assert module.status_code == 200 and module.text == (CLIENT / "src" / "index.js").read_text()
        bundle = httpx.get(url + "/static/dpdist-client.js", timeout=30)  # the page's one module
        assert bundle.status_code == 200 and "javascript" in bundle.headers["content-type"]
        dashboard = httpx.get(url + "/campaigns/items/dashboard", timeout=30)  # a template of the wheel
        assert dashboard.status_code == 200 and '<body data-campaign="items">' in dashboard.text
        script = httpx.get(url + "/static/pages/dashboard.js", timeout=30)
        assert script.status_code == 200 and script.text == (ROOT / "src/dpdist/serve/_web/static/dashboard.js").read_text()

        # the relay in front of that collector: it starts and answers
        relay_port = _free_port()
        relay_url = f"http://127.0.0.1:{relay_port}"
        with _server([dpdist_, "relay", "--queue", work / "q.sqlite", "--collector", url, "--port", relay_port,
                      "--log-level", "warning"], env, relay_url, tmp_path / "relay.log"):
            assert httpx.get(relay_url + "/healthz", timeout=10).json() == {"status": "ok", "service": "dpdist relay"}


@pytest.mark.slow
@pytest.mark.timeout(3600)  # installs from the registry on a fresh machine: 30 minutes an install, its own bound
def test_the_wheel_without_extras_is_the_library_and_command_line(artefacts, tmp_path):
    _, wheel = artefacts
    constraints = tmp_path / "constraints.txt"
    _run([_uv(), "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes", "-q", "-o", constraints],
         cwd=ROOT)
    bin_ = _venv(tmp_path / "venv", wheel, [], constraints)
    env = {**{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}, "MPLBACKEND": "Agg"}
    _run([bin_ / "python", "-m", "pip", "check"], env=env)
    (tmp_path / "v.csv").write_text("x\n" + "\n".join(str(i % 5) for i in range(500)) + "\n")
    estimate = _run([bin_ / "dpdist", "estimate", "v.csv", "--column", "x", "--protocol", "grr", "--epsilon", "2"],
                    cwd=tmp_path, env=env)
    assert "grr with epsilon=2 on 500 values" in estimate.stdout
    serve = _run([bin_ / "dpdist", "serve", "--db", "c.sqlite"], cwd=tmp_path, env=env, check=False)
    assert serve.returncode == 2 and "pip install 'dpdist[serve]'" in serve.stderr and serve.stderr.count("\n") == 1
    heavy = _run([bin_ / "python", "-c", "import sys, dpdist, dpdist.frame; print(sorted(m for m in ('pandas', "
                  "'polars', 'narwhals', 'pyarrow', 'dask', 'httpx') if m in sys.modules))"], cwd=tmp_path, env=env)
    assert heavy.stdout.strip() == "[]"


def test_the_long_description_reads_right_on_pypi():
    """The README is the wheel's long description (PyPI's project page): rendered by the build's
    hatch-fancy-pypi-readme hook, its links are absolute (a relative link leads nowhere there) and it says nothing
    of a PyPI release that has not happened."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(sys.executable).parent / "hatch-fancy-pypi-readme"
    rendered = subprocess.run([str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True).stdout
    readme = (ROOT / "README.md").read_text()
    assert re.findall(r"\]\((?!https?://|#)([^)]+)\)", readme), "the README keeps its relative links for GitHub"
    assert re.findall(r"\]\((?!https?://|#)([^)]+)\)", rendered) == []
    assert "](https://github.com/dpdist/dpdist/blob/main/docs/tutorials/index.md)" in rendered
    assert "not on PyPI yet" not in rendered
