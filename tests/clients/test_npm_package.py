"""The JavaScript client as an npm package: ``npm pack``'s tarball installs into an empty folder with no
dependency and no network, and is used from there by a node script (ES module; records that Python reads),
type-checked with ``tsc`` against its declarations, and bundled with esbuild into a page that runs in headless
Chromium.  Its version is the Python package's, and its README states the wire format version both write.

typescript and esbuild come from the npm registry, installed once into a cache folder (``js_support.npm_tools``).
Slow: npm, tsc, esbuild and a browser.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import dpdist
from dpdist import io, local
from dpdist._io._binary import RECORD_VERSION
from dpdist.local._registry import CONFIG_VERSION

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "js"


def test_the_package_version_and_readme_match_the_python_package_and_its_wire_formats():
    package = json.loads((CLIENT / "package.json").read_text())
    assert package["version"] == dpdist.__version__ and package["name"] == "dpdist-client"
    assert not package.get("dependencies") and package["type"] == "module"
    wire = (CLIENT / "src" / "wire.js").read_text()
    assert int(re.search(r"export const RECORD_VERSION = (\d+);", wire).group(1)) == RECORD_VERSION
    readme = (CLIENT / "README.md").read_text()
    section = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert f"dpdist-client {dpdist.__version__}" in section and f"dpdist {dpdist.__version__}" in section
    assert f"report records version {RECORD_VERSION}" in section and f"configs version {CONFIG_VERSION}" in section


def _run(command, cwd, timeout=300, **kwargs):
    result = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True,
                            timeout=timeout, **kwargs)
    assert result.returncode == 0, f"{command}: {result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result


@pytest.fixture(scope="module")
def npm():
    from ops_support import required

    required("node")
    return required("npm")


@pytest.fixture(scope="module")
def tarball(npm, tmp_path_factory):
    out = tmp_path_factory.mktemp("pack")
    packed = json.loads(_run([npm, "pack", "--json", "--pack-destination", out], cwd=CLIENT).stdout)
    (entry,) = packed
    return out / entry["filename"], {file["path"] for file in entry["files"]}


@pytest.fixture(scope="module")
def installed(npm, tarball, tmp_path_factory):
    """An empty folder where ``npm install <tarball>`` ran offline (the client has no dependency)."""
    app = tmp_path_factory.mktemp("app")
    _run([npm, "install", "--offline", "--no-audit", "--no-fund", tarball[0]], cwd=app)
    return app


@pytest.fixture(scope="module")
def tools():
    """typescript and esbuild (js_support.npm_tools)."""
    from js_support import npm_tools

    return npm_tools()


@pytest.mark.slow
def test_the_tarball_holds_the_sources_types_and_license_and_no_tests(tarball):
    path, files = tarball
    assert path.name == f"dpdist-client-{dpdist.__version__}.tgz"
    sources = {f"src/{p.relative_to(CLIENT / 'src').as_posix()}" for p in (CLIENT / "src").rglob("*.js")}
    assert sources <= files
    assert {"package.json", "README.md", "LICENSE", "index.d.ts", "protocol.d.ts", "bin/privatize.js"} <= files
    assert not any(name.startswith("test/") for name in files)


_SCRIPT = """
import { writeFileSync } from 'node:fs';
import { SUPPORTED_PROTOCOLS, fromConfig, privatize, privatizeRecord } from 'dpdist-client';
import GRR from 'dpdist-client/grr';
import pkg from 'dpdist-client/package.json' with { type: 'json' };

const oue = { protocol: 'oue', version: 1, epsilon: 1.0, domain_size: 16 };
const values = Array.from({ length: 1000 }, (_, i) => i % 16);
writeFileSync('oue.bin', privatizeRecord(oue, values));
const batch = GRR.privatize({ protocol: 'grr', version: 1, epsilon: 2.0, domain_size: 4 }, [0, 1, 2, 3]);
console.log(JSON.stringify({
  version: pkg.version, protocols: SUPPORTED_PROTOCOLS.length, oue: fromConfig(oue).config,
  grr: { descr: batch.descr, shape: batch.shape, entry: GRR.protocol },
}));
"""


@pytest.mark.slow
def test_a_node_script_imports_the_installed_package_and_python_reads_its_records(installed):
    (installed / "use.mjs").write_text(_SCRIPT)
    out = json.loads(_run(["node", "use.mjs"], cwd=installed).stdout.strip().splitlines()[-1])
    assert out["version"] == dpdist.__version__ and out["protocols"] >= 20
    oue = local.make("oue", epsilon=1.0, domain_size=16)
    assert out["oue"] == oue.config()  # the normalized config, as Python's
    assert out["grr"] == {"descr": "|u1", "shape": [4], "entry": "grr"}
    batch = io.decode_record((installed / "oue.bin").read_bytes(), oue)  # a record Python reads as its own
    assert batch.n_read == 1000 and oue.aggregator().add_batch(batch).n == 1000


_GOOD_TS = """
import { RandomSource, ReportBatch, fromConfig, privatize } from 'dpdist-client';
import GRR from 'dpdist-client/grr';

const config = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };
const batch: ReportBatch = privatize(config, [1, 2, 3], { source: new RandomSource() });
const rows: number = batch.length + GRR.privatize(config, [4]).shape[0];
const name: string = fromConfig(config).name + GRR.protocol;
export { rows, name };
"""

_BAD_TS = """
import { privatize } from 'dpdist-client';
const rows: string = privatize({ protocol: 'grr', epsilon: 1, domain_size: 8 }, [1], { source: 42 }).length;
export { rows };
"""


@pytest.mark.slow
def test_tsc_checks_a_typescript_file_against_the_declarations(installed, tools):
    options = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target",
               "es2022", "--lib", "es2022,dom", "--skipLibCheck", "false"]
    (installed / "good.ts").write_text(_GOOD_TS)
    (installed / "bad.ts").write_text(_BAD_TS)
    # one tsc over both files (each run reads the declarations and TypeScript's libraries again: 3 CPU-s); tsc names
    # the file of each error, so good.ts is clean when every error is bad.ts's
    checked = subprocess.run([tools / "tsc", *options, "good.ts", "bad.ts"], cwd=installed, capture_output=True,
                             text=True, timeout=300)
    errors = [line for line in checked.stdout.splitlines() if re.search(r"error TS\d+", line)]
    assert errors and all(line.startswith("bad.ts(") for line in errors), checked.stdout + checked.stderr
    assert checked.returncode != 0  # the declarations are read: a wrong type is an error
    assert "Type 'number' is not assignable to type 'string'" in checked.stdout
    assert "'source'" in checked.stdout or "RandomSource" in checked.stdout



def _readme_blocks() -> list[str]:
    return re.findall(r"^```js\n(.*?)^```", (CLIENT / "README.md").read_text(), flags=re.S | re.M)


def _tsc_errors(tools, cwd, files, options) -> str:
    return subprocess.run([str(tools / "tsc"), *options, *files], cwd=cwd, capture_output=True, text=True,
                          timeout=300).stdout


@pytest.mark.slow
def test_every_readme_example_type_checks_under_strict(installed, tools):
    """The client README's JavaScript blocks are TypeScript-clean under ``--strict`` against the declarations.

    A block uses names the text around it introduces (``config``, ``values``, a credential): names the package
    exports are imported from it (so they keep their declared types), any other free name is declared ``any``;
    then the blocks must have no error at all (say, a method called on a result that may be null)."""
    options = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target",
               "es2022", "--lib", "es2022,dom", "--skipLibCheck", "false"]
    blocks = _readme_blocks()
    assert len(blocks) >= 6
    exported = set(re.findall(r"^export (?:declare )?(?:class|function|const|interface|type) (\w+)",
                              (CLIENT / "index.d.ts").read_text(), flags=re.M))
    files = []
    for number, block in enumerate(blocks):
        files.append(f"readme_{number}.mts")  # an ES module: top-level await
        (installed / files[-1]).write_text(block + "\nexport {};\n")
    missing = re.findall(r"^(readme_\d+\.mts)\(\d+,\d+\): error TS(?:2304|2552): Cannot find name '(\w+)'",
                         _tsc_errors(tools, installed, files, options), flags=re.M)
    free: dict[str, set[str]] = {}
    for file, name in missing:
        free.setdefault(file, set()).add(name)
    for file, names in free.items():
        imports = sorted(names & exported)
        others = sorted(names - exported)
        head = f"import {{ {', '.join(imports)} }} from 'dpdist-client';\n" if imports else ""
        head += "".join(f"declare const {name}: any;\n" for name in others)
        (installed / file).write_text(head + (installed / file).read_text())
    assert _tsc_errors(tools, installed, files, options) == ""

_PAGE_JS = """
import { Client, privatize, privatizeRecord } from 'dpdist-client';
import OUE from 'dpdist-client/oue';

const config = { protocol: 'oue', version: 1, epsilon: 1.0, domain_size: 32 };
const values = Array.from({ length: 500 }, (_, i) => i % 32);
const batch = privatize(config, values);
const record = privatizeRecord(config, values);
document.body.dataset.result = JSON.stringify({
  shape: batch.shape, oue: OUE.privatize(config, [1, 2]).shape, record: record.length,
  magic: String.fromCharCode(...record.slice(0, 6)), client: typeof Client,
});
"""


@pytest.mark.slow
def test_a_page_bundled_with_esbuild_runs_in_chromium(installed, tools):
    from ops_support import chromium_devtools, run_page, serving, static_pages

    site = installed / "site"
    site.mkdir()
    (installed / "page.js").write_text(_PAGE_JS)
    _run([tools / "esbuild", "page.js", "--bundle", "--format=esm", "--platform=browser", "--minify",
          f"--outfile={site / 'bundle.js'}"], cwd=installed)
    (site / "index.html").write_text('<!doctype html><html><body><script type="module" src="bundle.js"></script>'
                                     "</body></html>")
    size = (site / "bundle.js").stat().st_size
    with serving(static_pages(site)) as url, chromium_devtools() as port:
        page = run_page(port, url + "/index.html", [["wait", "document.body && document.body.dataset.result"],
                                                    ["eval", "document.body.dataset.result"]])
    result = json.loads(page["values"][0])
    assert result["shape"] == [500, 4] and result["oue"] == [2, 4]  # 32 bits packed in 4 bytes per report
    assert result["magic"].startswith("DPD") and result["record"] > 500 * 4 and result["client"] == "function"
    assert 0 < size < 400_000, size  # the whole client bundled (every protocol: the main entry keeps them all)


def test_the_readme_and_the_package_description_name_every_frequency_oracle_of_the_client():
    """clients/js's README protocol list and package.json description name each frequency oracle the client
    registers (rue, rlh, rws were missing)."""
    import json as _json
    import re as _re
    from pathlib import Path as _Path

    from dpdist import local as _local

    root = _Path(__file__).parents[2] / "clients" / "js"
    index = (root / "src" / "protocols" / "_index.js").read_text()
    registered = set(_re.findall(r"^\s+'?([a-z][a-z-]*)'?: [A-Z]", index, flags=_re.M))
    oracles = sorted(registered & set(_local.available("frequency")))
    assert {"rue", "rlh", "rws"} <= set(oracles)
    readme = (root / "README.md").read_text()
    listed = readme[readme.index("Protocols: "):readme.index("\n\n", readme.index("Protocols: "))]
    description = _json.loads((root / "package.json").read_text())["description"]
    assert [name for name in oracles if f"`{name}`" not in listed] == []
    assert [name for name in oracles if name.upper() not in description.upper()] == []
    key_value = sorted(registered & set(_local.available("key_value")))  # sets of pairs: named in both too
    assert key_value == ["pckv-grr", "pckv-ue", "privkv"]
    assert [name for name in key_value if f"`{name}`" not in listed or name.upper() not in description.upper()] == []
