"""The Java client's ``privatize`` against the JavaScript client's, per CPU-second, on the same protocols.

Target: the Java client's privatize throughput per CPU-second is within 2x of the JavaScript client's on every
protocol (ratio Java / JavaScript >= 0.5).  Both privatize the same configs, one of each of their 31 protocols (two of
sw), and the same batches of 1000 values (``batch_values``) from their CSPRNG (``crypto.getRandomValues``; ``SecureRandom``),
through their list API (``privatize(config, values)``; ``Protocol.privatize(List)``), for at least ``--seconds`` of the
process's CPU (user + system, every thread: the JIT and the garbage collector count), ``--runs`` times, after a warm-up
of ``--warmup`` CPU-seconds of every config (the JVM's JIT needs a few CPU-seconds for the unary encodings' loops); the processes alternate, ``--rounds`` times, so that a busy spell of the shared machine falls on both.
Reported: the median rate of each client and their ratio.

Usage::

    uv run python benchmarks/bench_java_client.py [--seconds 1] [--runs 3] [--warmup 3] [--rounds 2] [--out benchmarks/results/java_client.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from dpdist import local

ROOT = Path(__file__).resolve().parents[1]
#: one config of every protocol of the two clients (d = 1024 where there is one item domain, 1024 bins)
ATTRIBUTES = [{"name": "a", "domain_size": 16, "protocol": "grr"}, {"name": "b", "domain_size": 64, "protocol": "oue"},
              {"name": "c", "domain_size": 256, "protocol": "olh"}]
CASES = [
    {"protocol": "grr", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "oue", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "sue", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "rue", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "olh", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "rlh", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "ocms", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "hr", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "ss", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "rws", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "pgr", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "cms", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "hcms", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "pem", "epsilon": 1.0, "bits": 16},
    {"protocol": "sw", "epsilon": 1.0, "bins": 1024},
    {"protocol": "sw", "epsilon": 1.0, "bins": 1024, "discrete": True},
    {"protocol": "gw", "epsilon": 1.0, "bins": 1024},
    {"protocol": "opm", "epsilon": 1.0, "bins": 1024},
    {"protocol": "opm-circular", "epsilon": 1.0, "bins": 1024},
    {"protocol": "threshold", "epsilon": 1.0, "grid_size": 1024, "cuts": [256, 512, 768]},
    {"protocol": "l-grr", "epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 1024},
    {"protocol": "l-osue", "epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 1024},
    {"protocol": "loloha", "epsilon": 2.0, "epsilon_1": 1.0, "domain_size": 1024},
    {"protocol": "dbitflippm", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "spl", "epsilon": 1.0, "attributes": ATTRIBUTES},
    {"protocol": "smp", "epsilon": 1.0, "attributes": ATTRIBUTES},
    {"protocol": "rsfd", "epsilon": 1.0, "attributes": ATTRIBUTES},
    {"protocol": "rsrfd", "epsilon": 1.0, "attributes": ATTRIBUTES[:2]},
    {"protocol": "calm", "epsilon": 1.0, "attributes": [{"name": name, "domain_size": 8} for name in "abc"]},
    {"protocol": "hdg", "epsilon": 1.0, "attributes": [{"name": "x", "bounds": [0.0, 1.0]}, {"name": "y", "bounds": [-5.0, 5.0]}]},
    {"protocol": "privkv", "epsilon": 1.0, "domain_size": 64},
    {"protocol": "pckv-ue", "epsilon": 1.0, "domain_size": 64, "padding_length": 4},
    {"protocol": "pckv-grr", "epsilon": 1.0, "domain_size": 64, "padding_length": 4},
]
BATCH = 1000  # values per privatize call, as both drivers privatize them


def _spread(i: int, size: int) -> int:
    return (i * 7919) % size


def _between(i: int, bounds: list[float]) -> float:
    return bounds[0] + (bounds[1] - bounds[0]) * (i + 0.5) / BATCH


def batch_values(config: dict) -> list:
    """The BATCH values both clients privatize for ``config``, as JSON: items spread over the domain (frequency, heavy
    hitters), values spread over the bounds (numerical), rows of both (records), two key-value pairs per user."""
    protocol = local.from_config(config)
    kind, config = protocol.tags.kind, protocol.config()
    if kind == "frequency":
        return [_spread(i, config["domain_size"]) for i in range(BATCH)]
    if kind == "heavy_hitters":
        return [_spread(i, 2 ** config["bits"]) for i in range(BATCH)]
    if kind == "numerical":
        return [_between(i, config["bounds"]) for i in range(BATCH)]
    if kind == "multi":
        return [[_spread(i + 31 * j, a["domain_size"]) if "domain_size" in a else _between(i, a["bounds"])
                 for j, a in enumerate(config["attributes"])] for i in range(BATCH)]
    if kind == "key_value":
        size = config["domain_size"]
        return [[[_spread(i, size), (i % 200 - 99.5) / 100], [_spread(i, size) ^ 1, 0.5]] for i in range(BATCH)]
    raise ValueError(f"no values for a protocol of kind {kind!r}")


def _build(folder: Path, client: Path | None = None) -> str:
    """The client (build.sh, unless ``client`` holds its compiled classes) and the benchmark class compiled into
    ``folder``; their class path."""
    if client is None:
        subprocess.run(["sh", str(ROOT / "clients" / "java" / "build.sh"), str(folder)], check=True, capture_output=True,
                       timeout=600)
        client = folder / "classes"
    subprocess.run(["javac", "--release", "11", "-cp", str(client), "-d", str(folder / "bench"),
                    str(ROOT / "benchmarks" / "BenchJavaClient.java")], check=True, capture_output=True, timeout=600)
    return f"{client}:{folder / 'bench'}"


def _rates(command: list[str]) -> list[list[float]]:
    result = subprocess.run(command, capture_output=True, text=True, timeout=3600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line)["rates"] for line in result.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU-seconds of each run (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="runs per config and round (default 3)")
    parser.add_argument("--warmup", type=float, default=3.0, help="CPU-seconds of warm-up of every config (default 3)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of the two processes (default 2)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "java_client.json")
    parser.add_argument("--client-classes", type=Path, default=None,
                        help="the Java client already compiled (its classes folder), of these sources; default: build it")
    arguments = parser.parse_args()
    node, java = shutil.which("node"), shutil.which("java")
    with tempfile.TemporaryDirectory() as folder:
        classpath = _build(Path(folder), arguments.client_classes)
        cases = Path(folder) / "cases.json"
        cases.write_text(json.dumps([{"config": config, "values": batch_values(config)} for config in CASES]))
        configs = f"@{cases}"
        rates: dict[str, list[list[float]]] = {"javascript": [[] for _ in CASES], "java": [[] for _ in CASES]}
        for _ in range(arguments.rounds):
            commands = {
                "javascript": [node, str(ROOT / "benchmarks" / "bench_js_client.mjs"), "--cpu", configs, str(arguments.seconds), str(arguments.runs),
                               str(arguments.warmup)],
                "java": [java, "-cp", classpath, "BenchJavaClient", configs, str(arguments.seconds), str(arguments.runs), str(arguments.warmup)],
            }
            for client, command in commands.items():
                for index, measured in enumerate(_rates(command)):
                    rates[client][index].extend(measured)
        versions = {
            "node": subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip(),
            "java": subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0],
        }
    rows = []
    for index, config in enumerate(CASES):
        script = statistics.median(rates["javascript"][index])
        java_rate = statistics.median(rates["java"][index])
        rows.append({"config": config, "javascript": rates["javascript"][index], "java": rates["java"][index],
                     "median_javascript": script, "median_java": java_rate, "ratio": java_rate / script})
    worst = min(row["ratio"] for row in rows)
    results = {"versions": versions, "seconds": arguments.seconds, "runs": arguments.runs, "warmup": arguments.warmup,
               "rounds": arguments.rounds, "rows": rows, "smallest_ratio": worst}
    arguments.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{versions['node']}, {versions['java']}, {platform.machine()}")
    print("\n".join(page_table(results)))
    print(f"\nsmallest ratio {worst:.2f} (target: >= 0.5)")


def describe(config: dict) -> str:
    """A config as the page's table names it (epsilon = 1, d = 1024; a record's attributes by protocol and size)."""
    parts = []
    for key, value in config.items():
        if key == "attributes":
            parts.append(", ".join(f"{a.get('protocol', 'auto')} {a['domain_size']}" if "domain_size" in a
                                   else f"{a['name']} in {a['bounds']}" for a in value))
        elif key == "discrete":
            parts.append("discrete" if value else "continuous")
        elif key != "protocol":
            parts.append(f"{'d' if key == 'domain_size' else key} = {f'{value:g}' if isinstance(value, float) else value}")
    return ", ".join(parts)


def _millions(rates: list[float]) -> str:
    return f"{min(rates) / 1e6:#.3g}-{max(rates) / 1e6:#.3g} M"


def page_table(results: dict) -> list[str]:
    """docs/reference/benchmarks/clients.md's table of ``results``: each config's range of runs of each client and the ratio of medians."""
    lines = ["| protocol | config | JavaScript reports per CPU-s | Java reports per CPU-s | Java / JavaScript |",
             "|---|---|---:|---:|---:|"]
    for row in results["rows"]:
        config = row["config"]
        lines.append(f"| {config['protocol']} | {describe(config)} | {_millions(row['javascript'])} | {_millions(row['java'])} | "
                     f"{row['ratio']:.2f} |")
    return lines

if __name__ == "__main__":
    main()
