"""The Java client from the Python tests: the JDK, the client compiled once, and what it implements (asked of it).

``java_tools()`` finds ``javac`` and ``java`` (a test skips without them, except under CI, where a missing JDK fails:
``.ci/run`` installs it); ``classpath()`` compiles the client (``clients/java/src/main``, Java 11 language and API
level, as Android's desugared library), its tests (``src/test``, against Debian's JUnit 5) and the conformance driver
(``tests/JavaConformanceDriver.java``) and the device driver (``tests/JavaDeviceDriver.java``) once per source state, into a cache folder named by the sources' hash, and
returns the class path; ``java_registry()`` is the client's registry as the driver reads it (its protocol classes),
and ``java_implements(protocol)`` says whether the client randomizes a protocol's config.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "java"
DRIVER = ROOT / "tests" / "JavaConformanceDriver.java"
DEVICE = ROOT / "tests" / "JavaDeviceDriver.java"
#: Debian's JUnit 5 (package junit5): the console launcher with the Jupiter API and engine in one jar
JUNIT = Path("/usr/share/java/junit-platform-console-standalone.jar")


def _required(message: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{message}, and CI is set: the Java client's tests must run in CI.")
    pytest.skip(f"{message} (CI installs it; see .ci/run)")


def java_tools() -> tuple[str, str]:
    """``(javac, java)`` of the JDK on the PATH."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        _required("a JDK (javac, java) is not installed")
    return javac, java


def junit_jar() -> Path:
    """Debian's JUnit 5 console launcher (package junit5)."""
    if not JUNIT.is_file():
        _required(f"JUnit 5 ({JUNIT}, Debian's junit5) is not installed")
    return JUNIT


def sources() -> list[Path]:
    """Every source the build reads: the client's main and test sources and the two drivers."""
    return sorted(CLIENT.joinpath("src").rglob("*.java")) + [DRIVER, DEVICE]


def _digest(files: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:20]


def compile_client(javac: str, out: Path, junit: Path) -> None:
    """``javac --release 11`` of the client into ``out/classes``, of its tests and the drivers into ``out/test-classes``."""
    main = sorted(str(path) for path in CLIENT.joinpath("src", "main").rglob("*.java"))
    tests = sorted(str(path) for path in CLIENT.joinpath("src", "test").rglob("*.java"))
    for folder in ("classes", "test-classes"):
        (out / folder).mkdir(parents=True, exist_ok=True)
    quick = "-J-XX:TieredStopAtLevel=1"  # the compiler's JVM on its quick JIT alone, as clients/java/build.sh says why
    commands = [
        [javac, quick, "--release", "11", "-Xlint:all", "-Werror", "-encoding", "UTF-8", "-d", str(out / "classes"), *main],
        [javac, quick, "--release", "11", "-encoding", "UTF-8", "-cp", f"{out / 'classes'}{os.pathsep}{junit}", "-d",
         str(out / "test-classes"), *tests, str(DRIVER), str(DEVICE)],
    ]
    for command in commands:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]


@functools.cache
def build() -> Path:
    """The folder of the compiled client and tests for the sources as they are now (compiled once per source state)."""
    javac, _ = java_tools()
    junit = junit_jar()
    files = sources()
    base = Path(os.environ.get("DPDIST_JAVA_BUILD") or Path(tempfile.gettempdir()) / f"dpdist-java-{os.getuid()}")
    base.mkdir(parents=True, exist_ok=True)
    out = base / _digest(files)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time (parallel test workers share the folder)
        if not (out / "done").exists():
            shutil.rmtree(out, ignore_errors=True)
            compile_client(javac, out, junit)
            (out / "done").write_text("ok\n")
    return out


def classpath() -> str:
    """The class path of the client, its tests and the driver."""
    out = build()
    return os.pathsep.join([str(out / "classes"), str(out / "test-classes"), str(junit_jar())])


def run_java(arguments: list[str], timeout: float = 900, **options) -> subprocess.CompletedProcess:
    """``java -cp <the client> arguments`` (its output as text)."""
    _, java = java_tools()
    return subprocess.run([java, "-cp", classpath(), *arguments], capture_output=True, text=True, timeout=timeout, **options)


@functools.cache
def java_registry() -> dict:
    """``{"supported": [...], "attributes": [...]}``: every protocol of the Java client, and those an attribute may use."""
    result = run_java(["JavaConformanceDriver", "registry"], timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def java_implements(protocol) -> bool:
    """Whether the Java client randomizes ``protocol``'s config (records: with every attribute's protocol)."""
    registry = java_registry()
    if protocol.name not in registry["supported"]:
        return False
    inners = getattr(protocol, "inner_protocols", ()) if protocol.tags.kind == "multi" else ()
    return all(inner.name in registry["attributes"] for inner in inners)


def run_device(request: dict, timeout: float = 600) -> dict:
    """One device of the Java client (``tests/JavaDeviceDriver.java``) doing ``request``: its last line of output, parsed
    (``{"acks": [...]}``, or ``{"error": {...}}`` for a refusal), with its exit status under ``"status"``."""
    result = run_java(["JavaDeviceDriver", json.dumps(request)], timeout=timeout)
    lines = result.stdout.strip().splitlines()
    assert result.returncode in (0, 3) and lines, result.stdout[-2000:] + result.stderr[-4000:]
    return {**json.loads(lines[-1]), "status": result.returncode}


#: the Android API levels of the JDK classes and members the library references (android_references' lines)
ANDROID_TABLE = CLIENT / "android-api.txt"
#: the Android API level the library's README asks of an app (minSdk)
ANDROID_MIN_SDK = 26


def jdk_references(classes: Path) -> dict[str, set[str]]:
    """Every JDK class, method and field the compiled classes under ``classes`` reference (their constant pools, by
    ``javap -v``), as ``{reference: {class files holding it}}``; a reference is ``owner`` for a class and
    ``owner.name:descriptor`` for a member, as javap prints them (``java/nio/file/Files.move:(...)Ljava/nio/file/Path;``)."""
    javap = str(Path(java_tools()[0]).with_name("javap"))
    files = sorted(classes.rglob("*.class"))
    result = subprocess.run([javap, "-v", "-p", *map(str, files)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    references: dict[str, set[str]] = {}
    holder = ""
    for line in result.stdout.splitlines():
        if line.startswith("Classfile "):
            holder = str(Path(line.split(" ", 1)[1]).relative_to(classes))
            continue
        kind, _, target = line.partition("= ")[2].partition(" ")
        if kind not in ("Class", "Methodref", "InterfaceMethodref", "Fieldref") or "// " not in target:
            continue
        reference = target.split("// ", 1)[1].strip()
        if kind == "Class" and reference.startswith('"['):  # an array type: its element class is a Class entry too
            continue
        if reference.startswith(("java/", "javax/")):
            references.setdefault(reference, set()).add(holder)
    return references


def android_table() -> dict[str, str]:
    """``ANDROID_TABLE`` as ``{reference: level}`` (``level`` an API level, or ``absent@Holder.class`` (or ``absent@A.class,B.class``) for a reference that
    no Android release through the table's platform has, allowed in that class only)."""
    table = {}
    for line in ANDROID_TABLE.read_text().splitlines():
        if line and not line.startswith("#"):
            level, reference = line.split(" ", 1)
            table[reference] = level
    return table


def android_levels(api_versions: Path, references: list[str]) -> dict[str, int | None]:
    """The Android API level at which each reference appears, read from the Android SDK's
    ``platform-tools/api/api-versions.xml`` (a class's ``since``, a member's own ``since`` or its class's, a member found
    on the class or the classes it extends or implements); ``None`` for what Android does not have."""
    from xml.etree import ElementTree  # only where the SDK's file is given (checking or writing the table)

    classes = {}
    for element in ElementTree.parse(api_versions).getroot().iter("class"):
        since = int(element.get("since", "1"))
        members = {child.get("name"): int(child.get("since", since)) for child in element if child.tag in ("method", "field")}
        parents = [child.get("name") for child in element if child.tag in ("extends", "implements")]
        classes[element.get("name")] = (since, members, parents)

    def member(owner: str, name: str, seen: set) -> int | None:
        if owner in seen or owner not in classes:
            return None
        seen.add(owner)
        since, members, parents = classes[owner]
        if name in members:
            return members[name]
        found = [level for parent in parents if (level := member(parent, name, seen)) is not None]
        return min(found) if found else None

    levels: dict[str, int | None] = {}
    for reference in references:
        owner, _, rest = reference.partition(".")
        if owner not in classes:
            levels[reference] = None
            continue
        if not rest:
            levels[reference] = classes[owner][0]
            continue
        name, _, descriptor = rest.partition(":")
        name = name.strip('"')
        key = name + descriptor if descriptor.startswith("(") else name
        found = member(owner, key, set())
        levels[reference] = None if found is None else max(found, classes[owner][0])
    return levels
