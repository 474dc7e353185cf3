"""Suite-wide guards (offline, and a loud failure for any request that leaves this machine), and
the shared pool of real file and shell servers."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import tempfile
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

if TYPE_CHECKING:
    from backend.mcp.pool import McpPool


os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
for _name in ("OVERSEER_MODEL", "OVERSEER_API_BASE", "OVERSEER_API_KEY", "OVERSEER_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
    os.environ.pop(_name, None)
# Nothing a test does may touch the person's ~/.overseer.
os.environ["OVERSEER_DATA_DIR"] = tempfile.mkdtemp(prefix="overseer-test-data-")


class RealNetworkRequest(RuntimeError):
    """A test tried to reach a real provider; tests must use the scripted model server."""


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _check(address: object) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            if host == "localhost":
                return
        raise RealNetworkRequest(f"test tried to connect to {address!r}; only loopback is allowed in tests")


def _guarded_connect(self: socket.socket, address: object) -> None:
    _check(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    _check(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_real_network():
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests last: Playwright's sync API keeps an event loop running in the main thread
    while its browser is open, and async tests cannot start their own loop after that.

    Under pytest-xdist each worker runs what it is sent in the order it is sent, and the scheduler
    sends tests in this order, unless `--dist loadfile` (or loadscope, loadgroup) reorders files
    by size: `make test` passes `--no-loadscope-reorder`, and `pytest_configure` insists on it.
    """
    items.sort(key=lambda item: item.nodeid.startswith("tests/e2e/"))


def pytest_configure(config: pytest.Config) -> None:
    dist = getattr(config.option, "dist", "no")
    if dist in ("loadscope", "loadfile", "loadgroup") and getattr(config.option, "loadscopereorder", False):
        raise pytest.UsageError(
            f"--dist {dist} reorders test files by size, which would run async tests after a worker's "
            "browser tests: add --no-loadscope-reorder (as `make test` does)"
        )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpPool]:
    """The real file and shell servers, started once per module and shared by its hosts.

    They run in memory (backend/testing/in_process.py): the servers' code and the pool's are the
    real ones, without two interpreters to start per module. A test of the process itself builds
    its own pool.

    A module that uses it runs its tests on the module-wide event loop (the pool's):
    `pytestmark = pytest.mark.asyncio(loop_scope="module")`.
    """
    # Imported here, so the environment guards above are in place before any backend module loads.
    from backend.mcp.config import builtin_servers
    from backend.mcp.pool import McpPool
    from backend.testing.in_process import in_process_transport

    root = tmp_path_factory.mktemp("pool")
    configs = builtin_servers(root=root, python=sys.executable)
    async with McpPool({k: configs[k] for k in ("file", "shell")}, log_dir=root / "logs", transport_factory=in_process_transport) as started:
        await started.wait_ready(timeout=60)
        yield started
