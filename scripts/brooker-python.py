"""Runs Marc Brooker's own simulators (https://github.com/mbrooker/simulator_example, not part
of this project: clone it and give the path) and writes their figures, each run's and their
spread, to a JSON file that docs/simulator.md and docs/validation.md quote
(test/validate/examples-catalog.ts reads it):

- sweep: simple_collapse_sim/sim.py on his spike, with his no-backoff client and his
  backoff-and-jitter client at several backoff bases, ten runs each from random.seed(1), and how
  many runs recovered, for docs/simulator.md's comparison with ./sim (docs/sim-anchors.json);
- example04: the same spike for the two clients examples/04-brooker-collapse.yaml uses (no
  backoff; backoff and jitter at his own base of 10 s), one run per seed, each run's successes
  per second from 50 s to 80 s and whether it recovered;

A run recovered where his server ends it with fewer requests in service than the 200 at which
his server's time alone (1 s + 10 ms each) reaches his 3 s timeout: ./sim's verdict asks the
same of its server (docs/sim-anchors.json). A collapsed run ends with thousands in service.
- example03: retry_sim/retry_sim.py at every setting examples/03-brooker-token-bucket.yaml
  reports, one run per seed, each run's success (successes / unique_calls) and load
  (total_calls / unique_calls); and its token-bucket settings again with ./sim's way of
  spreading open arrivals over client instances (round robin), to measure what that changes.

Their code runs unchanged: only the experiments at the end of each of his files are left out
(they would run at import) and rebuilt here with a seed per run.

    /usr/bin/python3 scripts/brooker-python.py ../simulator_example docs/brooker-python.json
"""
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
from datetime import datetime, timezone

repo, out = sys.argv[1], sys.argv[2]

SWEEP_RUNS = 10
SWEEP_SEED = 1
# Enough runs that a recovered share and a mean carry their spread: 100 spike runs take about 80 s.
EXAMPLE04_SEEDS = range(1, 101)
EXAMPLE03_SEEDS = range(1, 31)



def his_definitions(path, last_statement):
    """His file's definitions, without the experiments it runs from `last_statement` on."""
    source = open(os.path.join(repo, path)).read()
    definitions = {}
    exec(compile(source[: source.rindex(last_statement)], path, "exec"), definitions)
    return definitions


def spread(values):
    """Mean, sample standard deviation, min and max of one figure over the runs."""
    return {
        "mean": round(statistics.fmean(values), 6),
        "sd": round(statistics.stdev(values), 6),
        "min": round(min(values), 6),
        "max": round(max(values), 6),
    }


collapse = his_definitions(os.path.join("simple_collapse_sim", "sim.py"), "run_multiple_n = 10")


def client_with_base(base):
    class Client(collapse["ClientWithBackoffAndJitter"]):
        def __init__(self, stats, server):
            super().__init__(stats, server)
            self.backoff_time = base

    return Client


# Requests in service at which his server's time alone reaches the timeout: above it every request times out.
TIPPING_CONCURRENCY = (collapse["max_request_t"] - collapse["base_server_time"]) / collapse["server_concurrency_slope"]


def spike_run(client):
    """One spike run: successes per second over 50-80 s (windows 50..79) and over the last ten seconds, and whether it recovered."""
    history = collapse["run_sim_spike"]("spike", client)
    ok_per_sec = lambda windows: sum(second.successes for second in windows) / len(windows)
    # Every window holds the one server: its concurrency now is the run's end.
    return ok_per_sec(history[50:80]), ok_per_sec(history[-10:]), history[-1].server.concurrency < TIPPING_CONCURRENCY


def sweep_row(client):
    random.seed(SWEEP_SEED)
    runs = [spike_run(client) for _ in range(SWEEP_RUNS)]
    return {
        "recovered": sum(recovered for _, _, recovered in runs),
        "runs": SWEEP_RUNS,
        "lastTenSecondsOkPerSec": [round(last_ten, 1) for _, last_ten, _ in runs],
    }


def example04_client(client):
    ok_50_to_80, recovered_seeds = [], []
    for seed in EXAMPLE04_SEEDS:
        random.seed(seed)
        ok, _, recovered = spike_run(client)
        ok_50_to_80.append(round(ok, 4))
        if recovered:
            recovered_seeds.append(seed)
    return {
        "runs": len(ok_50_to_80),
        "recovered": len(recovered_seeds),
        "recoveredSeeds": recovered_seeds,
        "okPerSec50to80": spread(ok_50_to_80),
        "okPerSec50to80PerSeed": ok_50_to_80,
    }


sweep = [{"client": "no backoff", "firstWindowS": 0, **sweep_row(collapse["Client"])}]
for base in [0.05, 0.5, 1.0, 2.5, 5.0, 10.0]:
    sweep.append({"client": f"backoff and jitter, base {base} s", "firstWindowS": 2 * base, **sweep_row(client_with_base(base))})
    print(sweep[-1]["client"], sweep[-1]["recovered"], flush=True)

example04 = {"no backoff": example04_client(collapse["Client"]), "backoff and jitter": example04_client(collapse["ClientWithBackoffAndJitter"])}
for name, record in example04.items():
    print("example 04", name, record["recovered"], "of", record["runs"], record["okPerSec50to80"], flush=True)

sys.path.insert(0, os.path.join(repo, "retry_sim"))
retry = his_definitions(os.path.join("retry_sim", "retry_sim.py"), "\nrun_sims_retry_serial(10.0)")
import client as his_client  # noqa: E402 (his retry_sim/client.py, found through the path above)
# His run_sims and run_sims_clients: 10 s of load, then the drain of what is in flight.
RETRY_MAX_T = 10.0
POLICIES = {
    "no retries": lambda: retry["NRetriesFactory"](0),
    "three retries": lambda: retry["NRetriesFactory"](3),
    "token bucket": lambda: retry["AdaptiveRetryFactory"](0.1, 5),
    "breaker": lambda: retry["CircuitBreakerRetryFactory"](retry["NRetriesFactory"](3), 0.1),
}


class RoundRobinArrivals:
    """One Poisson arrival process for all his clients, arrival n going to client n mod their count: how ./sim
    spreads open arrivals over -instances, where each of his clients runs its own Poisson process. His sim_loop
    drives it as it drives a client (gen_load, drain); his Call carries each request."""

    def __init__(self, clients, rate):
        self.clients, self.rate, self.drain, self.sent = clients, rate, False, 0

    def gen_load(self, _payload, t):
        if self.drain:
            return []
        client = self.clients[self.sent % len(self.clients)]
        self.sent += 1
        call = his_client.Call(client.retry_strategy, client.server, client.stats, client, client.retry_backoff)
        return [(t + random.expovariate(self.rate), self.gen_load, None), (t, call.start, None)]


def retry_run(n_clients, rate_per_client, failure_rate, policy, seed, round_robin):
    random.seed(seed)
    stats = retry["Stats"](failure_rate, policy)
    server = retry["Server"](failure_rate)
    factory = POLICIES[policy]()
    clients = [retry["Client"](factory.make(), rate_per_client, server, stats, 0.0) for _ in range(n_clients)]
    retry["sim_loop"]([RoundRobinArrivals(clients, n_clients * rate_per_client)] if round_robin else clients, RETRY_MAX_T)
    return stats.successes, stats.total_calls, stats.unique_calls


def retry_setting(key, n_clients, rate_per_client, failure_rate, policy, round_robin=False):
    runs = [retry_run(n_clients, rate_per_client, failure_rate, policy, seed, round_robin) for seed in EXAMPLE03_SEEDS]
    print("example 03", "round robin" if round_robin else "", key, flush=True)
    return {
        "clients": n_clients,
        "ratePerClient": rate_per_client,
        "failureRate": failure_rate,
        "policy": policy,
        "success": spread([successes / unique for successes, _, unique in runs]),
        "load": spread([total / unique for _, total, unique in runs]),
        # Per seed, in seed order: [successes, total_calls, unique_calls].
        "perSeed": [list(run) for run in runs],
    }


# The keys are examples-catalog.ts's: run_sims (100 clients at 10/s), then run_sims_clients (100/s in all).
example03 = {}
for failure_rate in [0.05, 0.2, 0.5]:
    for policy in POLICIES:
        example03[f"{policy}@{failure_rate}"] = retry_setting(f"{policy}@{failure_rate}", 100, 10.0, failure_rate, policy)
for n_clients, failure_rate in [(10, 0.2), (10, 0.5), (1000, 0.2)]:
    for policy in ["token bucket", "breaker"]:
        key = f"{policy}, {n_clients} clients@{failure_rate}"
        example03[key] = retry_setting(key, n_clients, 100.0 / n_clients, failure_rate, policy)
# The token bucket's settings again with ./sim's arrivals (RoundRobinArrivals): its load depends on how requests fall on the clients.
example03_round_robin = {
    key: retry_setting(key, setting["clients"], setting["ratePerClient"], setting["failureRate"], setting["policy"], round_robin=True)
    for key, setting in example03.items()
    if setting["policy"] == "token bucket"
}

git = lambda *args: subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
dirty = git("status", "--porcelain", "--untracked-files=no") != ""
record = json.dumps(
    {
        "source": "https://github.com/mbrooker/simulator_example simple_collapse_sim/sim.py and retry_sim/retry_sim.py",
        "sourceCommit": git("-C", repo, "rev-parse", "HEAD"),
        "commit": git("rev-parse", "HEAD") + ("+dirty" if dirty else ""),
        "command": "/usr/bin/python3 scripts/brooker-python.py <his clone> " + out,
        "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, {platform.system()}",
        "python": platform.python_version(),
        "date": datetime.now(timezone.utc).isoformat(),
        "recoveredBelowConcurrency": TIPPING_CONCURRENCY,
        "sweep": {"seed": SWEEP_SEED, "note": "ten runs in a row from one random.seed", "rows": sweep},
        "example04": {"seeds": f"{EXAMPLE04_SEEDS[0]}-{EXAMPLE04_SEEDS[-1]}, random.seed(seed) before each run", **example04},
        "example03": {
            "seeds": f"{EXAMPLE03_SEEDS[0]}-{EXAMPLE03_SEEDS[-1]}, random.seed(seed) before each run",
            "maxT": RETRY_MAX_T,
            "settings": example03,
            "roundRobinArrivals": {
                "note": "his code unchanged but fed by one Poisson process whose arrival n goes to client n mod their count, as ./sim -instances does",
                "settings": example03_round_robin,
            },
        },
    },
    indent=2,
)
# A list of numbers on one line, as Prettier would write it, rather than one number a line.
flat = re.sub(r"\[\s+([-\d., \n]+?)\s+\]", lambda lists: "[" + " ".join(lists.group(1).split()) + "]", record)
open(out, "w").write(flat + "\n")
