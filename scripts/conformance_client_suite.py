"""Run the MCP conformance suite's client side, one scenario at a time (`make conformance`).

Usage: conformance_client_suite.py NODE CONFORMANCE_JS RESULTS_DIR BASELINE

The suite's own `--suite all` starts all 48 scenarios at once: 48 Python clients importing the
host on a 2-core machine push the load past 40 and every scenario past its 30 s timeout. One at a
time, each against the baseline (BASELINE lists known failures by check, with reasons). Prints one
line per scenario and a total; the exit code is 1 if any scenario failed against the baseline.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLIENT = f"{ROOT / '.venv/bin/python'} {ROOT / 'scripts/conformance_client.py'}"
TIMEOUT_MS = 60_000


def client_scenarios(node: str, conformance_js: str) -> list[str]:
    """The suite's client scenarios, as `list --client` prints them (`  - name [versions]`)."""
    listing = subprocess.run([node, conformance_js, "list", "--client"], capture_output=True, text=True, check=True)
    return re.findall(r"^\s+- (\S+)", listing.stdout, flags=re.MULTILINE)


def tally(results: Path) -> tuple[int, int]:
    """Checks passed and failed in every checks.json under `results` (INFO and SKIPPED count as neither)."""
    passed = failed = 0
    for path in results.rglob("checks.json"):
        for check in json.loads(path.read_text()):
            passed += check["status"] == "SUCCESS"
            failed += check["status"] in ("FAILURE", "WARNING")
    return passed, failed


def main(node: str, conformance_js: str, results: str, baseline: str) -> int:
    failures: list[str] = []
    scenarios = client_scenarios(node, conformance_js)
    for scenario in scenarios:
        run = subprocess.run(
            [node, conformance_js, "client", "--scenario", scenario, "--command", CLIENT,
             "--timeout", str(TIMEOUT_MS), "--output-dir", results, "--expected-failures", baseline],
            capture_output=True, text=True,
        )
        verdict = "ok" if run.returncode == 0 else "FAILED"
        print(f"client {scenario}: {verdict}", flush=True)
        if run.returncode != 0:
            failures.append(scenario)
            sys.stdout.write(run.stdout[-3000:])
    passed, failed = tally(Path(results))
    print(f"client side: {passed} checks passed, {failed} failed or warned (baselined or not); "
          f"{len(scenarios) - len(failures)} of {len(scenarios)} scenarios as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    sys.exit(main(*sys.argv[1:]))
