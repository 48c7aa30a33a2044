"""The Java client (clients/java): its build, its JUnit tests, its jar, and the cross-language proofs that need no server.

- ``clients/java/build.sh OUT test`` (javac at the Java 11 level, jar, Debian's JUnit 5 console launcher) runs from
  here, so ``uv run pytest`` covers the JUnit tests (a failing test fails this one, with JUnit's summary);
- the jar holds the classes, the README and the licence, the sources jar every source: a program compiled against the
  jar alone (``javac -cp dpdist-client-VERSION.jar``, as an Android or Kotlin project depends on it) privatizes, and
  Python reads its record;
- the jar is named by dpdist's version (``tests/package/test_release.py`` checks it is ``DpDist.VERSION``);
- Android's API level: every JDK class and member the library's classes reference is in ``clients/java/android-api.txt``
  with the Android API level that has it, none above the README's minSdk but for what the library loads only where the
  runtime has it (``java.net.http``, the X25519 key specs), and on a runtime without ``java.net.http``
  (``java --limit-modules java.base``, as on Android) the library privatizes and its client falls back to
  ``HttpURLConnection``.

Without a JDK (or JUnit 5) the tests skip, except under CI (``CI=true``), where a missing JDK fails (``.ci/run``
installs a JDK and ``junit5``).  Slow: the build and the JUnit run take about 40 CPU-s, once for the module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from dpdist import io, local
from java_support import ANDROID_MIN_SDK, ANDROID_TABLE, CLIENT, android_levels, android_table, jdk_references, java_tools, junit_jar
from run_once_support import once_per_run

pytestmark = pytest.mark.slow

VERSION = re.search(r'String VERSION = "([^"]+)"', (CLIENT / "src/main/java/org/dpdist/client/DpDist.java").read_text())[1]


@pytest.fixture(scope="module")
def build_and_junit(tmp_path_factory) -> tuple[Path, dict]:
    """``clients/java/build.sh OUT test`` run once: the classes, the jar and the sources jar it builds, then the JUnit
    tests, and its outcome (``returncode``, ``stdout``, ``stderr``).

    The JUnit test and the tests of the jar read the same build, which built the client once for them where each
    built it (6 CPU-s).  pytest-xdist workers that get some of this module's tests share the temporary folder's parent:
    the first one runs the build, the others read its outcome."""
    java_tools()
    junit = junit_jar()

    def build(out: Path) -> dict:
        result = subprocess.run(["sh", str(CLIENT / "build.sh"), str(out), "test"], capture_output=True, text=True,
                                timeout=1200, env={**os.environ, "JUNIT_JAR": str(junit)})
        return {"returncode": result.returncode, "stdout": result.stdout, "stderr": result.stderr}

    return once_per_run(tmp_path_factory, "java-build", build)


@pytest.fixture(scope="module")
def built(build_and_junit) -> Path:
    """The jar, the sources jar and the classes that build.sh made (before it ran the tests: its line "built ..." comes
    after its last javac and jar, which ``set -eu`` stops at)."""
    out, result = build_and_junit
    assert re.search(r"^built ", result["stdout"], re.MULTILINE), result["stdout"][-3000:] + result["stderr"][-3000:]
    return out


def test_the_junit_tests_pass(build_and_junit):
    _, result = build_and_junit
    summary = result["stdout"][-6000:] + result["stderr"][-3000:]
    assert result["returncode"] == 0, summary
    found = int(re.search(r"(\d+) tests found", result["stdout"])[1])
    assert found >= 100 and " 0 tests failed" in result["stdout"], summary


def test_the_jar_holds_the_classes_readme_and_licence_and_the_sources_jar_every_source(built):
    jar = built / f"dpdist-client-{VERSION}.jar"
    sources = built / f"dpdist-client-{VERSION}-sources.jar"
    with zipfile.ZipFile(jar) as archive:
        names = set(archive.namelist())
    assert {"README.md", "LICENSE", "org/dpdist/client/DpDist.class", "org/dpdist/client/protocols/GRR.class"} <= names
    assert not any(name.endswith(".java") or "Test" in name for name in names)
    with zipfile.ZipFile(sources) as archive:
        listed = set(archive.namelist())
    expected = {str(path.relative_to(CLIENT / "src/main/java")) for path in (CLIENT / "src/main/java").rglob("*.java")}
    assert expected <= listed and "README.md" in listed


APP = """
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import org.dpdist.client.DpDist;

public final class App {
    public static void main(String[] arguments) throws Exception {
        byte[] record = DpDist.privatizeRecord(arguments[0], Arrays.asList(3, 1, 4, 1, 5, 9, 2, 6));
        Files.write(Paths.get(arguments[1]), record);
        System.out.println(DpDist.fromConfig(arguments[0]).name);
    }
}
"""


def test_a_program_compiled_against_the_jar_alone_privatizes_and_python_reads_its_record(built, tmp_path):
    javac, java = java_tools()
    jar = built / f"dpdist-client-{VERSION}.jar"
    (tmp_path / "App.java").write_text(APP)
    compiled = subprocess.run([javac, "--release", "11", "-cp", str(jar), "-d", str(tmp_path), str(tmp_path / "App.java")],
                              capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stderr
    protocol = local.make("oue", epsilon=1.0, domain_size=10)
    out = tmp_path / "reports.bin"
    result = subprocess.run([java, "-cp", f"{jar}:{tmp_path}", "App", json.dumps(protocol.config()), str(out)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "oue", result.stderr
    batch = io.read_reports(out, protocol)
    assert batch.n_read == batch.n_valid == 8 and batch.rejected == {}
    assert io.encode_record(protocol, batch.reports) == out.read_bytes()  # byte for byte Python's writer


def test_every_jdk_call_of_the_library_is_on_androids_api_at_the_readmes_min_sdk(built):
    references = jdk_references(built / "classes")
    table = android_table()
    missing = sorted(set(references) - set(table))
    assert not missing, f"JDK references not in {ANDROID_TABLE.name} (add each with its Android API level): {missing[:20]}"
    stale = sorted(set(table) - set(references))
    assert not stale, f"lines of {ANDROID_TABLE.name} that no class references any more: {stale[:20]}"
    for reference, level in table.items():
        if level == "d8":  # lambdas and Java 9+ string concatenation: D8 rewrites their invokedynamic for any minSdk
            assert reference.startswith(("java/lang/invoke/LambdaMetafactory", "java/lang/invoke/StringConcatFactory")), reference
        elif level.startswith("absent@"):  # only in the classes (comma-separated) the library loads where the runtime has it
            assert references[reference] == set(level.removeprefix("absent@").split(",")), (reference, sorted(references[reference]))
        else:
            assert int(level) <= ANDROID_MIN_SDK, f"{reference} needs Android API {level}, above minSdk {ANDROID_MIN_SDK}"
    assert f"`minSdk` {ANDROID_MIN_SDK}" in (CLIENT / "README.md").read_text()
    sdk_file = os.environ.get("DPDIST_ANDROID_API_VERSIONS")  # the Android SDK's platform-tools/api/api-versions.xml
    if sdk_file:
        levels = android_levels(Path(sdk_file), sorted(table))
        stated = {reference: (None if level.startswith(("absent@", "d8")) else int(level)) for reference, level in table.items()}
        differ = {reference: (stated[reference], levels[reference]) for reference in table if stated[reference] != levels[reference]
                  and table[reference] != "d8"}
        assert not differ, f"levels that the SDK's file states otherwise (table, file): {differ}"


PLATFORM = """
import java.lang.reflect.Method;
import java.util.Arrays;
import org.dpdist.client.DpDist;

public final class Platform {
    public static void main(String[] arguments) throws Exception {
        Method platformDefault = Class.forName("org.dpdist.client.HttpTransport").getDeclaredMethod("platformDefault");
        platformDefault.setAccessible(true);
        System.out.println(platformDefault.invoke(null).getClass().getSimpleName());
        System.out.println(DpDist.privatize(arguments[0], Arrays.asList(1, 2, 3)).length());
    }
}
"""


def test_without_java_net_http_the_library_privatizes_and_talks_http_through_url_connection(built, tmp_path):
    """Android's runtime has no java.net.http: a JVM limited to java.base has none either."""
    javac, java = java_tools()
    jar = built / f"dpdist-client-{VERSION}.jar"
    (tmp_path / "Platform.java").write_text(PLATFORM)
    compiled = subprocess.run([javac, "--release", "11", "-cp", str(jar), "-d", str(tmp_path), str(tmp_path / "Platform.java")],
                              capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, compiled.stderr
    config = json.dumps(local.make("grr", epsilon=1.0, domain_size=4).config())
    seen = {}
    for name, limit in (("jdk", []), ("java.base", ["--limit-modules", "java.base"])):
        result = subprocess.run([java, *limit, "-cp", f"{jar}:{tmp_path}", "Platform", config], capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        seen[name] = result.stdout.split()
    assert seen == {"jdk": ["JdkHttpTransport", "3"], "java.base": ["UrlConnectionTransport", "3"]}
