"""The Java client's ``privatize`` against the JavaScript client's, per CPU-second, on the same protocols (issue 60).

Target: the Java client's privatize throughput per CPU-second is within 2x of the JavaScript client's on every
protocol measured (ratio Java / JavaScript >= 0.5).  Both privatize the same configs and the same batches of 1000
values (``benchmarks/bench_js_client.mjs``'s cases) from their CSPRNG (``crypto.getRandomValues``; ``SecureRandom``),
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

ROOT = Path(__file__).resolve().parents[1]
CASES = [
    {"protocol": "grr", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "oue", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "sue", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "olh", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "hr", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "ss", "epsilon": 1.0, "domain_size": 1024},
    {"protocol": "sw", "epsilon": 1.0, "bins": 1024},
    {"protocol": "sw", "epsilon": 1.0, "bins": 1024, "discrete": True},
    {"protocol": "gw", "epsilon": 1.0, "bins": 1024},
]


def _build(folder: Path) -> str:
    """The client (build.sh) and the benchmark class compiled into ``folder``; their class path."""
    subprocess.run(["sh", str(ROOT / "clients" / "java" / "build.sh"), str(folder)], check=True, capture_output=True, timeout=600)
    subprocess.run(["javac", "--release", "11", "-cp", str(folder / "classes"), "-d", str(folder / "bench"),
                    str(ROOT / "benchmarks" / "BenchJavaClient.java")], check=True, capture_output=True, timeout=600)
    return f"{folder / 'classes'}:{folder / 'bench'}"


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
    arguments = parser.parse_args()
    node, java = shutil.which("node"), shutil.which("java")
    configs = json.dumps(CASES)
    with tempfile.TemporaryDirectory() as folder:
        classpath = _build(Path(folder))
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
    print(f"{versions['node']}, {versions['java']}, {platform.machine()}")
    print("| protocol | config | JavaScript reports per CPU-s | Java reports per CPU-s | Java / JavaScript |")
    print("|---|---|---:|---:|---:|")
    for index, config in enumerate(CASES):
        script = statistics.median(rates["javascript"][index])
        java_rate = statistics.median(rates["java"][index])
        rows.append({"config": config, "javascript": rates["javascript"][index], "java": rates["java"][index],
                     "median_javascript": script, "median_java": java_rate, "ratio": java_rate / script})
        params = {key: value for key, value in config.items() if key != "protocol"}
        print(f"| {config['protocol']} | {json.dumps(params)} | {script:,.0f} | {java_rate:,.0f} | {java_rate / script:.2f} |")
    worst = min(row["ratio"] for row in rows)
    print(f"\nsmallest ratio {worst:.2f} (target: >= 0.5)")
    arguments.out.write_text(json.dumps({"versions": versions, "seconds": arguments.seconds, "runs": arguments.runs, "warmup": arguments.warmup,
                                         "rounds": arguments.rounds, "rows": rows, "smallest_ratio": worst}, indent=1) + "\n")


if __name__ == "__main__":
    main()
