"""Runs Yandex's own retry simulator ("Good Retry, Bad Retry", github.com/jirfag/simulations, not
part of this project: clone it and give the path) on the two experiments that
examples/07-yandex-good-retry-bad-retry.yaml reproduces, and writes their figures to a JSON
file for docs/validation.md (test/validate/examples-catalog.ts reads it).

Their simulation_main.py, "retry_cb_or_budget_vs_exp_backoff" and its "_partial_failure":
1000 requests a second (one client each, Poisson arrivals), 22 CPUs (int(4 x 0.54 x 1000 x mean
service time)), service time 10 ms x lognormal(0, 0.25), 100 ms client timeout, 0.5 % errors
everyday, every request failing (or 30 % of them) from 0.5 s to 1.0 s of a 1.5 s run, one
client state for all (use_global_client_state). Their simulator, server, client and strategies
run unchanged, imported from the checkout; only simulation_main.py's set-up is rebuilt here,
because it draws service times with numpy, which this machine lacks: random.lognormvariate
draws the same distribution from Python's own generator. Needs simpy 3 or 4 (their
requirements pin 4.0.1; Debian's python3-simpy is SimPy 2, another API): where no package
index serves it, a clone of simpy's source on PYTHONPATH (github.com/cristiklein/simpy, 3.0.8).

    PYTHONPATH=SIMPY/src /usr/bin/python3 scripts/yandex-record.py PATH docs/yandex-simulations.json
"""
import json
import os
import platform
import random
import subprocess
import sys
from datetime import datetime, timezone

repo, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, repo)
import simpy  # noqa: E402
from retry_strategies import FixedRetryCountStrategy, RetryBudgetStrategy, RetryCircuitBreakerStrategy  # noqa: E402
from server import CpuBoundServer, InjectedFailure  # noqa: E402
from shared import TIME_DURATION_MS, TIME_DURATION_SECOND, TimeInterval, TimePoint  # noqa: E402
from simulator import RunParams, Simulator  # noqa: E402

SEEDS = [1, 2, 3, 4, 5]
TARGET_RPS = 1000
MEAN_SERVICE_MS = 10 * 2.718281828459045 ** (0.25 * 0.25 / 2)
CPU_COUNT = int(4 * 0.54 * TARGET_RPS * MEAN_SERVICE_MS / 1000)
FAILURE_FROM, FAILURE_TO = 0.5 * TIME_DURATION_SECOND, 1.0 * TIME_DURATION_SECOND


def strategies():
    retry_2x = FixedRetryCountStrategy(2)
    return [
        ("no retries", FixedRetryCountStrategy(0)),
        ("retry-2x", FixedRetryCountStrategy(2)),
        ("retry budget 10 %", RetryBudgetStrategy(retry_budget_ratio=0.1, underlying_strategy=retry_2x)),
        (
            "retry breaker 10 %",
            RetryCircuitBreakerStrategy(max_failures_rate=0.1, underlying_strategy=retry_2x, window_duration=200 * TIME_DURATION_MS),
        ),
    ]


def run(strategy, failure_prob, seed):
    random.seed(seed)
    # Their Simulator keeps one simpy.Environment as a class attribute; each run gets its own.
    Simulator.env = simpy.Environment()
    failures = [InjectedFailure(interval=TimeInterval(begin=TimePoint(FAILURE_FROM), end=TimePoint(FAILURE_TO)), failure_prob=failure_prob)]
    server = CpuBoundServer(
        cpu_count=CPU_COUNT,
        handle_duration_builder=lambda: int(10 * TIME_DURATION_MS * random.lognormvariate(0, 0.25)),
        injected_failures=failures,
        target_uptime=0.995,
    )
    params = RunParams(
        id="run",
        retry_strategy=strategy,
        server=server,
        load_spike=None,
        target_duration=int(1.5 * TIME_DURATION_SECOND),
        target_rps=TARGET_RPS,
        cpu_count=CPU_COUNT,
        client_timeout_builder=lambda: 100 * TIME_DURATION_MS,
    )
    result = Simulator().run_multiple_simulations([params]).results[0]
    # As their chart's "relative server RPS": requests the server finished in the failure, per request offered.
    during = [event for event in result.server if FAILURE_FROM <= event.timepoint < FAILURE_TO]
    offered = TARGET_RPS * (FAILURE_TO - FAILURE_FROM) / TIME_DURATION_SECOND
    clients = [client for client in result.client if FAILURE_FROM <= client.timepoint < FAILURE_TO]
    return {
        "loadDuring": len(during) / offered,
        "clientSuccessDuring": sum(1 for client in clients if client.is_ok) / len(clients),
    }


rows = []
for failure_name, failure_prob in [("full outage", 1.0), ("30 % errors", 0.3)]:
    for name, _ in strategies():
        runs = []
        for seed in SEEDS:
            strategy = dict(strategies())[name]
            sys.stdout = open(os.devnull, "w")  # their simulator prints a line per run
            try:
                runs.append(run(strategy, failure_prob, seed))
            finally:
                sys.stdout = sys.__stdout__
        mean = {key: sum(r[key] for r in runs) / len(runs) for key in runs[0]}
        rows.append({"failure": failure_name, "strategy": name, **{k: round(v, 4) for k, v in mean.items()}, "perSeed": runs})
        print(f"{failure_name}, {name}: load during {mean['loadDuring']:.3f}, client success during {mean['clientSuccessDuring']:.3f}")


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()


record = {
    "source": "https://github.com/jirfag/simulations simulation_main.py: retry_cb_or_budget_vs_exp_backoff(_partial_failure)",
    "sourceCommit": git("-C", repo, "rev-parse", "HEAD"),
    "commit": git("-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "HEAD"),
    "seeds": SEEDS,
    "cpus": CPU_COUNT,
    "machine": f"{os.cpu_count()} cores, {platform.machine()}, {platform.system()}",
    "python": platform.python_version(),
    "simpy": simpy.__version__,
    "simpyFrom": simpy.__file__,
    "simpyCommit": subprocess.run(["git", "-C", os.path.dirname(simpy.__file__), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
    "date": datetime.now(timezone.utc).isoformat(),
    "command": "PYTHONPATH=SIMPY/src /usr/bin/python3 scripts/yandex-record.py PATH docs/yandex-simulations.json",
    "rows": rows,
}
with open(out, "w") as f:
    json.dump(record, f, indent=2)
    f.write("\n")
