"""The suite itself: every test module can be collected beside every other."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_outside_packages_share_a_name():
    # pytest imports a module of a folder without __init__.py by its bare name: two such
    # test_server.py files stop the whole run at collection (it happened), though each passes alone.
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            by_name[path.name].append(str(path.relative_to(TESTS)))
    assert not {name: paths for name, paths in by_name.items() if len(paths) > 1}
