"""The service's own pages (``dpdist.serve._pages``): Jinja2 templates and static scripts and styles.

- the pages are templates with no inline script or style, rendered with autoescape on: a campaign id, a proxy's path
  prefix or a label with markup shows as text, and no Python string of ``src/dpdist`` holds a page or a script;
- their scripts pass node's test runner (``tests/serve/pages_js``), type-check under ``tsc --strict`` (``// @ts-check``
  and JSDoc) and duplicate no code of the JavaScript client (jscpd), as the client itself is checked
  (``tests/clients/test_npm_package.py``);
- in Chromium, by behaviour: the dashboard and the index take the admin token out of their address at once, keep it
  for the tab (a reload works), and never send it but in the ``Authorization`` header: not in the address of any
  request, not from a ``token`` that somehow is in their own query string.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import httpx
import pytest

import browser_support
import dpdist
from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "dpdist" / "serve" / "_web" / "static"
CLIENT = ROOT / "clients" / "js"
chromium = browser_support.chromium  # the fixture, under its name in this module
EVIL = "</script><script>alert(1)</script><b onmouseover=alert(2)>x</b>"


@pytest.fixture
def client(tmp_path):
    from dpdist.serve import create_app

    return TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN))


# ---------------------------------------------------------------------------- templates and static files
def _policy(response) -> dict[str, set[str]]:
    parts = (part.strip().split(" ", 1) for part in response.headers["content-security-policy"].split(";"))
    return {name: set(value.split()) for name, value in parts}


def test_the_pages_are_templates_whose_scripts_and_styles_are_files_of_this_origin(client):
    for path, accept in (("/campaigns/commute/dashboard", "*/*"), ("/", "text/html")):
        page = client.get(path, headers={"Accept": accept})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert not re.search(r"<script\b(?![^>]*\bsrc=)|<style\b|\sstyle=", page.text)  # nothing inline
        policy = _policy(page)
        assert policy["script-src"] == policy["style-src"] == {"'self'"} and policy["default-src"] == {"'none'"}
        scripts = re.findall(r'<script type="module" src="([^"]+)"', page.text)
        styles = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page.text)
        assert len(scripts) == len(styles) == 1
        for url in (*scripts, *styles):
            served = client.get(httpx.URL(f"http://testserver{path}").join(url))
            assert served.status_code == 200 and served.text == (STATIC / url.rsplit("/", 1)[1]).read_text()
    assert client.get("/static/pages/token.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/pages/../_pages.py").status_code == 404


def _request(**scope):
    from starlette.requests import Request

    return Request({"type": "http", "method": "GET", "path": "/", "headers": [], "query_string": b"", **scope})


def test_a_campaign_id_a_path_prefix_or_a_version_cannot_put_markup_in_a_page():
    """Autoescape on: what a template is given shows as text (ids are checked too: ``test_serve_app.py``)."""
    from dpdist.serve import _pages

    dashboard = bytes(_pages.dashboard_page(_request(), EVIL).body).decode()
    index = bytes(_pages.index_page(_request(root_path=EVIL), EVIL).body).decode()
    escaped = "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;b onmouseover=alert(2)&gt;x&lt;/b&gt;"
    assert dashboard.count(escaped) == 3 and index.count(escaped) >= 4  # the version, and the prefix in every URL
    for page in (dashboard, index):
        assert "<script>alert" not in page and "<b onmouseover" not in page and "alert(1)</script>" not in page
    assert 'data-campaign="' + escaped + '"' in dashboard


def _strings(tree: ast.AST) -> list[ast.Constant]:
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


#: What marks a page, a script or a style sheet held in a string (markup; a JavaScript function, arrow, import or
#: declaration; a CSS rule); the middleware's patterns read pages, they hold none.
PAGE_MARKS = re.compile(r"<!doctype|<html|<body|<script|<style|<svg|\bfunction\s*\w*\s*\([^)]*\)\s*\{|=>\s*\{"
                        r"|\bimport\s*\{[^}]*\}\s*from|\b(?:const|let)\s+\w+\s*=|[\w\]]\s*\{\s*[a-z-]+\s*:[^;{}]*;", re.I)
#: What every alternative of PAGE_MARKS needs (each one without its leading ``\b`` or its tail): a file matching none
#: of them holds no page mark (the file-level filter below; ~0.2 of the 0.4 CPU-s that PAGE_MARKS alone takes over the
#: package, whose ``\b`` branches are tried at every character of every file)
PAGE_MARK_PARTS = [re.compile(part, re.I) for part in (
    r"<!doctype|<html|<body|<script|<style|<svg", r"function\s*\w*\s*\(", r"=>\s*\{", r"import\s*\{", r"const\s",
    r"let\s", r"\{\s*[a-z-]+\s*:[^;{}]*;")]
READERS = {("_guard/_security_headers.py", r"<script\b(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>"),
           ("_guard/_security_headers.py", r"<style\b[^>]*>(.*?)</style\s*>")}


def test_no_page_or_script_is_held_in_a_python_string():
    package = Path(dpdist.__path__[0])
    found = []
    for path in sorted(package.rglob("*.py")):
        if "_clients_js" in path.parts:
            continue
        name, text = path.relative_to(package).as_posix(), path.read_text()
        if not (any(part.search(text) for part in PAGE_MARK_PARTS) and PAGE_MARKS.search(text)):
            # no mark anywhere in the file: none in its strings (most files; no parse)
            continue
        for node in _strings(ast.parse(text)):
            if PAGE_MARKS.search(node.value) and (name, node.value) not in READERS:
                found.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
    assert found == []


# ---------------------------------------------------------------------------- the scripts, checked as the client's
def _node() -> str:
    from js_support import node_path

    return node_path()


@pytest.mark.slow  # node
def test_node_tests_of_the_page_scripts_pass():
    result = subprocess.run([_node(), "--test", str(ROOT / "tests" / "serve" / "pages_js")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"^# pass (\d+)", result.stdout, re.M) and "# fail 0" in result.stdout


#: tsc on the pages' scripts: ``// @ts-check`` JavaScript with JSDoc, strict, against the DOM's declarations
TSC = ["--allowJs", "--checkJs", "--noEmit", "--strict", "--target", "es2022", "--lib", "es2022,dom,dom.iterable",
       "--module", "es2022", "--moduleResolution", "bundler", "--skipLibCheck", "false"]


@pytest.mark.slow  # npm tools, tsc
def test_the_page_scripts_type_check_under_strict(tmp_path):
    from js_support import npm_tools

    tools = npm_tools()
    scripts = sorted(STATIC.glob("*.js"))
    assert all(path.read_text().startswith("// @ts-check\n") for path in scripts), "every script opts in"
    # the check reads the scripts: a wrong name in a copy of one is an error
    for path in scripts:
        shutil.copy(path, tmp_path / path.name)
    token = tmp_path / "token.js"
    token.write_text(token.read_text().replace("win.location.hash.slice(1)", "win.location.hashes.slice(1)"))
    # one tsc over the scripts and the copies (two module graphs; each run read TypeScript's libraries again: 3 CPU-s):
    # tsc names each error's file relative to its folder, the copies' as "token.js(", the scripts' by their path
    copies = sorted(map(str, tmp_path.glob("*.js")))
    checked = subprocess.run([str(tools / "tsc"), *TSC, *map(str, scripts), *copies], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300)
    errors = [line for line in checked.stdout.splitlines() if re.search(r"error TS\d+", line)]
    assert errors and all(line.startswith("token.js(") for line in errors), checked.stdout[-3000:]  # the scripts: none
    assert "'hashes' does not exist" in checked.stdout


def _duplicates(tools: Path, folder: Path) -> list[str]:
    """The clones jscpd finds in ``folder`` of which one side is in its ``pages`` sub-folder."""
    # jscpd leaves out a file of more than its --max-lines (1,000 by default): client.js passed it, and was not compared
    subprocess.run([str(tools / "jscpd"), "--min-lines", "4", "--min-tokens", "40", "--max-lines", "100000",
                    "--max-size", "10mb", "--format", "javascript",
                    "--reporters", "json", "--output", str(folder / "report"), "--silent", str(folder / "pages"),
                    str(folder / "client")], capture_output=True, text=True, timeout=300, check=True)
    report = json.loads((folder / "report" / "jscpd-report.json").read_text())
    clones = []
    for clone in report["duplicates"]:
        sides = [clone["firstFile"], clone["secondFile"]]
        if any("/pages/" in side["name"] for side in sides):
            clones.append(" ~ ".join(f"{Path(side['name']).name}:{side['start']}-{side['end']}" for side in sides))
    return clones


@pytest.mark.slow  # npm tools, jscpd
def test_the_page_scripts_duplicate_no_code_of_the_client(tmp_path):
    """jscpd over the pages' scripts, the client's modules and the participation page's script: no clone with a side
    in the pages (the "what epsilon buys" box was one function written twice; both pages now import explain.js)."""
    from js_support import npm_tools

    tools = npm_tools()
    shutil.copytree(STATIC, tmp_path / "pages", ignore=shutil.ignore_patterns("*.css"))
    # the vendored libraries (src/vendor: HPKE, Privacy Pass; 9,500 lines) are not the client's code: compared since
    # --max-lines let them in, a run cost 46 CPU-s (14 user, 33 system), against 2.6 without them
    shutil.copytree(CLIENT / "src", tmp_path / "client" / "src", ignore=shutil.ignore_patterns("vendor"))
    page = (CLIENT / "participate.html").read_text()
    (tmp_path / "client" / "participate.js").write_text("\n".join(re.findall(r'<script type="module">(.*?)</script>',
                                                                             page, re.S)))
    assert _duplicates(tools, tmp_path) == []
    # a function of the client copied into a page script is found
    client = (CLIENT / "src" / "client.js").read_text()
    start = client.index("\nexport class Client")
    with open(tmp_path / "pages" / "format.js", "a") as script:
        script.write(client[start:start + 1500] + "\n}}\n")
    assert any(clone.startswith("format.js:") or "~ format.js:" in clone for clone in _duplicates(tools, tmp_path))


# ---------------------------------------------------------------------------- in Chromium, by behaviour
@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = ServerProcess(str(tmp_path_factory.mktemp("pages") / "campaigns.sqlite")).start()
    yield process
    process.stop()


def _campaign(server, name, config) -> None:
    with httpx.Client(base_url=server.url, headers=admin_headers(), timeout=30) as admin:
        assert admin.post("/api/campaigns", json={"campaign": name, "config": config}).status_code == 201
        assert admin.post(f"/api/campaigns/{name}/open").status_code == 200


LOADED = "document.body.dataset.loaded === 'true'"
#: what the page shows of its address and what it asked the server for
SEEN = ("({href: location.href, n: (document.getElementById('n') || {}).textContent,"
        " requests: performance.getEntriesByType('resource').map((entry) => entry.name),"
        " error: document.getElementById('error').textContent})")
RELOAD = ["eval", "window.__before = true; location.reload(); true"]
RELOADED = "!window.__before && document.body && " + LOADED


@pytest.mark.slow  # a server and Chromium
def test_the_dashboard_takes_the_token_out_of_its_address_and_sends_it_only_as_a_header(server, chromium):
    from ops_support import run_page

    _campaign(server, "tokens", {"protocol": "grr", "epsilon": 1.0, "domain_size": 4})
    dashboard = f"{server.url}/campaigns/tokens/dashboard"
    leaked = "query-token-0123456789"

    def check(seen):
        assert seen["href"] == f"{dashboard}?level=0.9", seen["href"]
        assert seen["n"] == "0" and seen["error"] == ""  # the token was used (and kept for the reload)
        api = [url for url in seen["requests"] if "/api/" in url]
        assert any("/estimate?level=0.9" in url for url in api), api  # the page's query goes on, without the token
        assert not any(ADMIN_TOKEN in url or leaked in url or "token=" in url for url in seen["requests"]), api

    page = run_page(chromium, f"{dashboard}?level=0.9#token={ADMIN_TOKEN}",
                    [["wait", LOADED], ["eval", SEEN], RELOAD, ["wait", RELOADED], ["eval", SEEN]])
    check(page["values"][0])
    check(page["values"][2])  # reloaded: the tab's kept token
    # a token in the page's own query string (the server refuses such a URL, so it is put there before the page's
    # scripts run): taken out of the address, never used, never sent on
    planted = run_page(chromium, f"{dashboard}#token={ADMIN_TOKEN}", [
        ["init", f"if (!sessionStorage.getItem('planted')) {{ sessionStorage.setItem('planted', '1');"
                 f" history.replaceState(null, '', location.pathname + '?level=0.9&token={leaked}' + location.hash); }}"],
        ["wait", LOADED], ["eval", SEEN]])
    check(planted["values"][0])
    assert page["csp"] == planted["csp"] == []


@pytest.mark.slow  # a server and Chromium
def test_a_refused_token_is_forgotten_and_the_index_keeps_its_token_out_of_its_address(server, chromium):
    from ops_support import run_page

    _campaign(server, "listed", {"protocol": "grr", "epsilon": 1.0, "domain_size": 4})
    index = run_page(chromium, f"{server.url}/#token={ADMIN_TOKEN}", [
        ["wait", LOADED],
        ["eval", "[location.href, [...document.querySelectorAll('#campaigns a')].map((a) => a.getAttribute('href'))]"],
        RELOAD, ["wait", RELOADED], ["eval", "location.href"]])
    (href, links), reloaded = index["values"][0], index["values"][2]
    assert href == reloaded == f"{server.url}/"
    assert f"/campaigns/listed/dashboard#token={ADMIN_TOKEN}" in links  # a link that opens the dashboard in a new tab
    wrong = run_page(chromium, f"{server.url}/campaigns/listed/dashboard#token=wrong-token-0123456789", [
        ["wait", "document.getElementById('error').textContent.includes('admin token')"],
        ["eval", "[location.href, sessionStorage.length]"]])
    assert wrong["values"][0] == [f"{server.url}/campaigns/listed/dashboard", 0]


@pytest.mark.slow  # a server and Chromium
def test_labels_with_markup_show_as_text_on_the_dashboard(server, chromium):
    from ops_support import run_page

    labels = [EVIL, "<img src=x onerror=\"window.__injected=1\">", "a & b", "plain"]
    _campaign(server, "markup", {"protocol": "grr", "epsilon": 2.0, "labels": labels})
    from dpdist.client import Client

    with Client(server.url) as admin:
        admin.submit_values("markup", [labels[k % 4] for k in range(400)])
    page = run_page(chromium, f"{server.url}/campaigns/markup/dashboard#token={ADMIN_TOKEN}", [
        ["wait", LOADED + " && document.querySelectorAll('#values tbody tr').length === 4"],
        ["eval", "({rows: [...document.querySelectorAll('#values tbody tr')].map((tr) => tr.cells[0].textContent),"
                 " names: [...document.querySelectorAll('#estimate-chart .xlabel title')].map((t) => t.textContent),"
                 " injected: window.__injected === 1 || document.querySelectorAll('img, [onmouseover], [onerror]').length})"]])
    shown = page["values"][0]
    assert shown["rows"] == shown["names"] == labels and shown["injected"] == 0
    assert page["csp"] == []  # no script was even tried
