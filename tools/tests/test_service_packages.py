"""scripts/setup.sh (as scripts/test.sh runs it) installs every Debian package whose programs the service
tests start: the two lists live apart, so this keeps them in step."""
import re
from pathlib import Path

import services as sv

SETUP = Path(__file__).resolve().parents[2] / "scripts" / "setup.sh"


def setup_test_packages() -> set[str]:
    m = re.search(r"^\s*test_packages=\(([^)]*)\)", SETUP.read_text(), re.MULTILINE)
    assert m, f"{SETUP} has no test_packages=(...) list"
    return set(m.group(1).split())


def test_setup_installs_every_package_the_service_tests_start():
    # pgserver.py finds PostgreSQL's initdb and postgres under Debian's postgresql package.
    needed = set(sv.PACKAGES.values()) | {"postgresql"}
    missing = sorted(needed - setup_test_packages())
    assert not missing, f"scripts/setup.sh's test_packages lacks {missing}"
