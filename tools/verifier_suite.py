"""The verifier's suite: oracle cases the verifier rejects live in
oracle-cases/verifier/, one file per rule family (reference/tests/rules.rs
fails when a rule has no rejection case there). Some were first written by
the case generators of other directories; those generators leave out the
cases the suite holds, so that rerunning them does not duplicate a case."""

import glob
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def suite_names():
    """Names of every case in oracle-cases/verifier/."""
    names = set()
    for path in glob.glob(os.path.join(REPO, "oracle-cases", "verifier", "*.json")):
        with open(path) as f:
            names.update(c.get("name") for c in json.load(f).get("cases", []))
    return names


def outside_suite(path, cases):
    """The cases of `path` the suite does not hold; when none is left, the
    file is removed and the empty list returned (write nothing)."""
    held = suite_names()
    kept = [c for c in cases if c["name"] not in held]
    if not kept and os.path.exists(path):
        os.remove(path)
    return kept
