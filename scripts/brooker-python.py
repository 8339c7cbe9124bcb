"""Runs Marc Brooker's own collapse simulation (simple_collapse_sim/sim.py of
https://github.com/mbrooker/simulator_example, not part of this project: clone it and give
the path) on his spike, with his no-backoff client and his backoff-and-jitter client at
several backoff bases, ten runs each, and writes how many runs recovered (the mean successes
per second of the last ten seconds at least 90 % of his 40 req/s) to a JSON file, for the
README's comparison with ./sim (docs/sim-anchors.json).

    python3 scripts/brooker-python.py ../simulator_example docs/brooker-python.json
"""
import json
import platform
import random
import subprocess
import sys
import os
from datetime import datetime, timezone

repo, out = sys.argv[1], sys.argv[2]
source = open(os.path.join(repo, "simple_collapse_sim", "sim.py")).read()
# His file runs all four experiments at its end: keep the definitions only.
sim = {}
exec(compile(source[: source.index("run_multiple_n = 10")], "sim.py", "exec"), sim)

RUNS = 10
SEED = 1


def client_with_base(base):
    class Client(sim["ClientWithBackoffAndJitter"]):
        def __init__(self, stats, server):
            super().__init__(stats, server)
            self.backoff_time = base

    return Client


def recovered(client):
    random.seed(SEED)
    finals = []
    for _ in range(RUNS):
        history = sim["run_sim_spike"]("spike", client)
        finals.append(sum(second.successes for second in history[-10:]) / 10)
    return {"recovered": sum(final >= 0.9 * 40 for final in finals), "runs": RUNS, "lastTenSecondsOkPerSec": [round(f, 1) for f in finals]}


rows = [{"client": "no backoff", "firstWindowS": 0, **recovered(sim["Client"])}]
for base in [0.05, 0.5, 1.0, 2.5, 5.0, 10.0]:
    rows.append({"client": f"backoff and jitter, base {base} s", "firstWindowS": 2 * base, **recovered(client_with_base(base))})
    print(rows[-1]["client"], rows[-1]["recovered"], flush=True)

git = lambda *args: subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
json.dump(
    {
        "source": "https://github.com/mbrooker/simulator_example simple_collapse_sim/sim.py",
        "sourceCommit": git("-C", repo, "rev-parse", "HEAD"),
        "commit": git("rev-parse", "HEAD"),
        "seed": SEED,
        "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, {platform.system()}",
        "python": platform.python_version(),
        "date": datetime.now(timezone.utc).isoformat(),
        "rows": rows,
    },
    open(out, "w"),
    indent=2,
)
open(out, "a").write("\n")
