"""``dpdist serve`` as users install it: from a wheel, and without the serve extra.

- A wheel built from this checkout (``uv build --wheel``) and installed into a fresh virtual environment
  serves the participation page and the JavaScript client: they are package data of the wheel (they
  were found through the source tree, so an installed server answered 404).
- Without the serve extra (``pip install dpdist``), ``dpdist campaign``, ``dpdist submit`` and ``dpdist serve``
  name the missing extra in one line (``dpdist submit`` said "internal error ModuleNotFoundError httpx").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ops_support import OpsServer

ROOT = Path(__file__).resolve().parents[2]


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("uv is not installed, and CI is set")
        pytest.skip("uv is not installed")
    return uv


def _run(command, **kwargs):
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, timeout=600, **kwargs)
    return result


@pytest.mark.slow
def test_the_installed_wheel_serves_the_participate_page_and_the_js_client(tmp_path):
    uv = _uv()
    built = _run([uv, "build", "--wheel", "--out-dir", tmp_path / "dist", ROOT], cwd=ROOT)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("dpdist-*.whl")
    # the versions this checkout is tested with (uv.lock), so that the uv cache usually has them all
    pins = tmp_path / "requirements.txt"
    exported = _run([uv, "export", "--frozen", "--extra", "serve", "--no-dev", "--no-emit-project", "--no-hashes",
                     "-q", "-o", pins], cwd=ROOT)
    assert exported.returncode == 0, exported.stderr
    venv = tmp_path / "venv"
    assert _run([uv, "venv", "-q", "--python", sys.executable, venv]).returncode == 0
    python = venv / "bin" / "python"
    install = [uv, "pip", "install", "-q", "--python", python, "-r", pins, f"{wheel}[serve]"]
    installed = _run([*install, "--offline"])  # from the uv cache when it has everything
    if installed.returncode != 0:
        installed = _run(install)  # else from the package index
    assert installed.returncode == 0, installed.stderr
    location = _run([python, "-c", "import dpdist.serve, pathlib; print(pathlib.Path(dpdist.serve.__file__).parent)"],
                    cwd=tmp_path)
    package = Path(location.stdout.strip())
    assert package.is_relative_to(venv)
    assert not (package.parents[2] / "clients" / "js").exists()  # no source tree to fall back to
    server = OpsServer(str(tmp_path / "c.sqlite"), program=[venv / "bin" / "dpdist"])
    server.start()
    try:
        page = httpx.get(server.url + "/campaigns/any/participate", timeout=30)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert page.text == (ROOT / "clients" / "js" / "participate.html").read_text()
        module = httpx.get(server.url + "/static/dpdist-client.js", timeout=30)
        assert module.status_code == 200 and "javascript" in module.headers["content-type"]
        for name in ("index.js", "client.js", "protocols/grr.js"):
            source = httpx.get(f"{server.url}/static/dpdist-client/{name}", timeout=30)
            assert source.status_code == 200 and source.text == (ROOT / "clients" / "js" / "src" / name).read_text()
        dashboard = httpx.get(server.url + "/campaigns/any/dashboard", timeout=30)  # a template, package data
        assert dashboard.status_code == 200 and '<body data-campaign="any">' in dashboard.text
        for name in ("dashboard.js", "token.js", "dashboard.css"):
            source = httpx.get(f"{server.url}/static/pages/{name}", timeout=30)
            assert source.status_code == 200 and source.text == (package / "_web" / "static" / name).read_text()
            assert source.text == (ROOT / "src" / "dpdist" / "serve" / "_web" / "static" / name).read_text()
    finally:
        server.stop()
    assert (package / "_clients_js" / "participate.html").is_file()  # package data, found by importlib.resources


_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None          # as if the serve extra were not installed
from dpdist.cli import main
sys.exit(main(sys.argv[2:]))
"""


#: the commands that need the serve extra, each with the module(s) missing
WITHOUT_THE_EXTRA = [
    pytest.param("httpx", ["campaign", "list", "--admin-token", "x" * 20], id="campaign-list"),
    pytest.param("httpx", ["campaign", "create", "--name", "c", "--config",
                           '{"protocol": "grr", "epsilon": 1, "domain_size": 4}', "--admin-token", "x" * 20],
                 id="campaign-create"),
    pytest.param("httpx", ["submit", "--campaign", "c", "--reports", "r.bin"], id="submit"),
    pytest.param("uvicorn,starlette", ["serve", "--db", "c.sqlite", "--admin-token", "x" * 20], id="serve"),
    pytest.param("jinja2", ["serve", "--db", "c.sqlite", "--admin-token", "x" * 20], id="serve-templates"),
]


def _names_the_extra(status: int, stderr: str, argv: list[str]) -> None:
    assert status == 2, stderr
    assert stderr.count("\n") == 1 and "internal error" not in stderr
    command = "dpdist " + argv[0]
    assert f"'{command}' needs the serve extra" in stderr and "pip install 'dpdist[serve]'" in stderr


# a Python subprocess each (0.3-0.7 CPU-s), as installed without the extra (nothing of it imported before dpdist.cli):
# the full suite; the fast loop runs the commands in process below, the same refusal (but the templates': jinja2 is
# imported with the service's modules, which a test process has loaded already)
@pytest.mark.slow
@pytest.mark.parametrize("missing, argv", WITHOUT_THE_EXTRA)
def test_without_the_serve_extra_commands_name_it_in_one_line(tmp_path, missing, argv):
    (tmp_path / "r.bin").write_bytes(b"")  # submit's DATA exists: the missing extra is what it must name
    result = subprocess.run([sys.executable, "-c", _WITHOUT, missing, *argv], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    _names_the_extra(result.returncode, result.stderr, argv)


@pytest.mark.parametrize("missing, argv", [param for param in WITHOUT_THE_EXTRA if param.id != "serve-templates"])
def test_without_the_serve_extra_commands_name_it_in_one_line_in_process(tmp_path, monkeypatch, capsys, missing, argv):
    from dpdist.cli import main

    (tmp_path / "r.bin").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    for name in missing.split(","):
        monkeypatch.setitem(sys.modules, name, None)  # its import raises ImportError, as if it were not installed
    status = main(argv)
    _names_the_extra(status, capsys.readouterr().err, argv)
