"""``dpdist relay`` against ``dpdist serve``: one-report requests per second, on the same machine.

Target: the relay takes one-report requests at >= 1/2 of the collector's own rate.  Both are real
processes on 127.0.0.1, each pinned to CPU 0 with ``taskset`` while it is measured, the load generator
(``wrk``, 2 threads, 32 keep-alive connections, a Lua script giving each request a fresh id) on CPU 1:

``collector``
    ``PUT /api/campaigns/c/batches/{id}``: one GRR report (d = 64) as a dpdist binary record, straight to
    ``dpdist serve`` (its per-address rate limit off: every request comes from 127.0.0.1; the relay's too).
``relay``
    ``PUT /relay/v1/campaigns/c/ohttp/{id}``: the same report as an RFC 9458 request to the campaign's key
    configuration (encapsulated once before the clock starts: the relay cannot tell), to ``dpdist relay``, which
    queues it and forwards shuffled batches to a ``dpdist serve`` (on CPU 1) meanwhile.

For each: acknowledged requests per wall second, per CPU-second of the measured process (its CPU time
read from ``/proc``, so the figure does not depend on how much of the shared machine it got), and p50/p99
latency.  Servers stop by themselves at the end of the run.

``--token-checks N`` measures instead, in this process, the CPU per report of the token check the relay's
admission and the collector's verification make (:func:`dpdist.privacypass.verify_token`: the RSA-2048
public operation) beside what binding a token to its report adds to it (:func:`dpdist._wire._binding.is_bound`:
the report's ``enc`` hashed with the token's challenge digest), for ``N`` tokens bound to RFC 9458 requests; the
thread's CPU time, best and median of 5 rounds.

Usage::

    uv run python benchmarks/bench_relay.py [--seconds 10] [--out benchmarks/results/relay.json]
    uv run python benchmarks/bench_relay.py --token-checks 500 [--out benchmarks/results/token_checks.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from relay_support import CollectorProcess, RelayProcess  # noqa: E402
from serve_support import admin_headers  # noqa: E402

from dpdist import io, local  # noqa: E402
from dpdist._wire import _ohttp_report  # noqa: E402

CONFIG = {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 64}
LUA = """
local f = io.open("{body}", "rb"); local body = f:read("*all"); f:close()
wrk.method = "PUT"
wrk.body = body
wrk.headers["Content-Type"] = "{content_type}"
{headers}local counter = 0
local made = 0
setup = function(thread) made = made + 1; thread:set("prefix", "{run}" .. made .. "-") end
init = function(args) counter = 0 end
request = function()
  counter = counter + 1
  return wrk.format(nil, "{path}" .. prefix .. counter)
end
"""


class Collector(CollectorProcess):
    """``dpdist serve`` without its per-address rate limit (every request of the load generator comes from 127.0.0.1)."""

    def environment(self) -> dict:
        return {**super().environment(), "DPDIST_RATE_LIMIT": "0"}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_wrk(url: str, script: Path, seconds: int) -> dict:
    output = subprocess.run(["taskset", "-c", "1", "wrk", "-t2", "-c32", f"-d{seconds}s", "--latency", "-s", str(script), url],
                            capture_output=True, text=True, timeout=seconds + 60).stdout
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    latency = dict(re.findall(r"\s+(50|99)%\s+([\d.]+\w+)", output))
    return {"requests": requests, "non_2xx": int(errors.group(1)) if errors else 0, "p50": latency.get("50"), "p99": latency.get("99"), "raw": output}


def measure(process, url: str, body: bytes, content_type: str, path: str, seconds: int, workdir: Path, run: str,
            headers: dict | None = None) -> dict:
    body_path = workdir / f"{run}.bin"
    body_path.write_bytes(body)
    script = workdir / f"{run}.lua"
    extra = "".join(f'wrk.headers["{name}"] = "{value}"\n' for name, value in (headers or {}).items())
    script.write_text(LUA.format(body=body_path, content_type=content_type, path=path, run=run, headers=extra))
    before, start = cpu_seconds(process.process.pid), time.monotonic()
    result = run_wrk(url, script, seconds)
    wall, cpu = time.monotonic() - start, cpu_seconds(process.process.pid) - before
    ok = result["requests"] - result["non_2xx"]
    return {"case": run, "acknowledged": ok, "per_wall_s": ok / wall, "per_cpu_s": ok / max(cpu, 1e-9), "cpu_s": cpu,
            "p50": result["p50"], "p99": result["p99"], "non_2xx": result["non_2xx"]}


def bound_messages(count: int) -> tuple[bytes, bytes, list[tuple[bytes, bytes]]]:
    """The token key and challenge of a campaign, and ``count`` (token, RFC 9458 request) pairs as devices send them,
    each token bound to its report."""
    from dpdist import _ohttp, privacypass as pp
    from dpdist._wire import _binding

    protocol = local.from_config(CONFIG)
    key = pp.generate_private_key()
    token_key, challenge = pp.encode_token_key(key.public_key()), pp.TokenChallenge("issuer.example", bytes(32)).encode()
    ohttp = _ohttp.KeyConfig(0, _ohttp.public_key_of(os.urandom(32)))
    messages = []
    for index in range(count):
        seed, body = os.urandom(32), io.encode_record(protocol, protocol.privatize([index % 64], secure=True))
        pending = pp.request_token(challenge, token_key, nonce=_binding.seed_nonce(challenge, seed))
        token = pp.finalize_token(pending, pp.blind_sign(key, pp.TokenRequest.decode(pending.request).blinded_msg))
        messages.append((token, _ohttp_report.encapsulate_report(ohttp, "c", body, "application/octet-stream", seed=seed)))
    return token_key, challenge, messages


def token_checks(count: int) -> list[dict]:
    """CPU-µs per report of today's token check and of the binding's addition (module docstring)."""
    from dpdist.privacypass import verify_token
    from dpdist._wire._binding import is_bound

    token_key, challenge, messages = bound_messages(count)

    def per_report(check) -> tuple[float, float]:
        rounds = []
        for _ in range(5):
            start = time.thread_time()
            for token, sealed in messages:
                check(token, sealed)
            rounds.append((time.thread_time() - start) / len(messages) * 1e6)
        return min(rounds), statistics.median(rounds)

    cases = (("token check (verify_token: RSA-2048 PSS, digest and key id)", lambda t, s: verify_token(t, token_key, challenge)),
             ("binding (is_bound: the report's enc, one SHA-256)", lambda t, s: is_bound(t, s)),
             ("both (the relay's admission, the collector's verification)",
              lambda t, s: verify_token(t, token_key, challenge) and is_bound(t, s)))
    assert all(is_bound(token, sealed) for token, sealed in messages)
    return [{"case": name, "best_us": best, "median_us": median} for name, (best, median) in
            ((name, per_report(check)) for name, check in cases)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--token-checks", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.token_checks:
        rows = token_checks(args.token_checks)
        print("| per report | best CPU-µs | median CPU-µs |")
        print("|---|---:|---:|")
        for row in rows:
            print(f"| {row['case']} | {row['best_us']:.1f} | {row['median_us']:.1f} |")
        print(f"binding / token check: {rows[1]['median_us'] / rows[0]['median_us']:.3f} (median)")
        if args.out:
            Path(args.out).write_text(json.dumps({"token_checks": rows, "reports": args.token_checks}, indent=1))
        return
    protocol = local.from_config(CONFIG)
    record = io.encode_record(protocol, protocol.privatize([3], secure=True))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        collector = Collector(str(workdir / "direct.sqlite"), cpu=0).start()
        try:
            with httpx.Client(base_url=collector.url, headers=admin_headers(), timeout=30) as admin:
                admin.post("/api/campaigns", json={"campaign": "c", "config": CONFIG}).raise_for_status()
                admin.post("/api/campaigns/c/open").raise_for_status()
            results.append(measure(collector, collector.url, record, "application/octet-stream", "/api/campaigns/c/batches/",
                                   args.seconds, workdir, "collector"))
        finally:
            collector.stop()
        collector = Collector(str(workdir / "relayed.sqlite"), cpu=1).start()
        relay = RelayProcess(workdir / "queue.sqlite", collector.url, min_batch=1000, max_batch=10000, cpu=0,
                             options=("--rate-limit", "0", "--limit-concurrency", "4096", "--max-pending-heads-per-address", "4096")).start()
        try:
            with httpx.Client(base_url=collector.url, headers=admin_headers(), timeout=30) as admin:
                # a relayed campaign without an issuer (no admission tokens): the relay's own cost and its queue
                admin.post("/api/campaigns", json={"campaign": "c", "config": CONFIG, "relay": {"url": relay.url}}).raise_for_status()
                admin.post("/api/campaigns/c/open").raise_for_status()
            relay_key = httpx.get(f"{relay.url}/api/campaigns/c/config", timeout=30).json()["relay"]
            request = _ohttp_report.encapsulate_report(_ohttp_report.campaign_key_config(relay_key), "c", record,
                                                       "application/octet-stream")
            results.append(measure(relay, relay.url, request, "message/ohttp-req", "/relay/v1/campaigns/c/ohttp/",
                                   args.seconds, workdir, "relay", {"Dpdist-Pin": relay_key["pin"]}))  # the identity devices hold
        finally:
            relay.stop()
            collector.stop()
    ratio = {key: results[1][key] / results[0][key] for key in ("per_wall_s", "per_cpu_s")}
    print("| case | acknowledged | per wall s | per CPU-s | p50 | p99 |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in results:
        print(f"| {row['case']} | {row['acknowledged']} | {row['per_wall_s']:.0f} | {row['per_cpu_s']:.0f} | {row['p50']} | {row['p99']} |")
    print(f"relay / collector: {ratio['per_wall_s']:.2f} per wall second, {ratio['per_cpu_s']:.2f} per CPU-second (target >= 0.5)")
    if args.out:
        Path(args.out).write_text(json.dumps({"results": results, "ratio": ratio}, indent=1))


if __name__ == "__main__":
    main()
