#!/usr/bin/python3
"""Counts test results from Bazel build event files, one per config.

Usage: test_summary.py EXPECTED_TARGETS_FILE CONFIG=BEP_JSON [...]

Bazel's own summary is not what CI reads; this derives the counts from the
build event protocol (one JSON event per line): a test target counts as
passed in a config only if its testSummary says PASSED. A target that failed
to build, timed out, or never ran (an aborted build) counts as failed, so a
broken build can never look green.

Prints one line per failed target and ends with the plain line
"N passed, N failed". Exits 1 if anything failed.
"""

import json
import sys


def read_statuses(bep_path):
    statuses = {}
    try:
        with open(bep_path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                event = json.loads(line)
                summary_id = event.get("id", {}).get("testSummary")
                if summary_id and "testSummary" in event:
                    statuses[summary_id["label"]] = event["testSummary"].get(
                        "overallStatus", "NO_STATUS")
    except FileNotFoundError:
        pass
    return statuses


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        expected = [t.strip() for t in f if t.strip()]
    passed = failed = 0
    for arg in argv[2:]:
        config, bep_path = arg.split("=", 1)
        statuses = read_statuses(bep_path)
        for target in expected:
            status = statuses.get(target, "DID_NOT_RUN")
            if status == "PASSED":
                passed += 1
            else:
                failed += 1
                print(f"FAILED [{config}] {target}: {status}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
