"""scripts/with_postgres.py: whether a Postgres server answers where the tests' URL points.

Starting a private cluster is checked by hand (it needs `initdb`, which a machine whose server
runs elsewhere may lack); these check the decision to start one.
"""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "with_postgres.py"


@pytest.fixture(scope="module")
def with_postgres() -> ModuleType:
    spec = importlib.util.spec_from_file_location("with_postgres", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@contextmanager
def listener(reply: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """A server on 127.0.0.1 that reads one request, answers `reply` (nothing: just closes)."""
    server = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            received.append(conn.recv(8))
            if reply:
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], received
    finally:
        thread.join(timeout=5)
        server.close()


def test_a_server_that_answers_the_ssl_request_is_postgres(with_postgres):
    with listener(b"N") as (port, received):
        assert with_postgres.answers(with_postgres.Target(host="127.0.0.1", port=port))
    assert received == [with_postgres.SSL_REQUEST]


def test_a_listener_that_closes_without_answering_is_not_postgres(with_postgres):
    with listener(b"") as (port, _):
        assert not with_postgres.answers(with_postgres.Target(host="127.0.0.1", port=port))


def test_a_port_nobody_listens_on_is_not_postgres(with_postgres):
    with socket.create_server(("127.0.0.1", 0)) as held:
        port = held.getsockname()[1]
    assert not with_postgres.answers(with_postgres.Target(host="127.0.0.1", port=port))


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("postgresql://postgres@127.0.0.1:5432/postgres", "127.0.0.1:5432"),
        ("postgresql://postgres@localhost/postgres", "localhost:5432"),
        ("postgresql://postgres@127.0.0.1:6001,127.0.0.1:6002/postgres", "127.0.0.1:6001"),
        ("postgresql:///postgres?host=/tmp/pg&port=6000", "/tmp/pg/.s.PGSQL.6000"),
        ("postgresql:///postgres", "/var/run/postgresql/.s.PGSQL.5432"),
        ("host=127.0.0.1 port=6000 user=postgres dbname=postgres", "127.0.0.1:6000"),
    ],
)
def test_the_probe_goes_where_libpq_would_connect(with_postgres, url, where):
    assert str(with_postgres.target_of(url)) == where


class Execed(Exception):
    """os.execvp, which never returns: the command replaced the script."""


def exec_recorder(ran: list[list[str]]):  # type: ignore[no-untyped-def]
    def execvp(file: str, argv: list[str]) -> None:
        ran.append(argv)
        raise Execed

    return execvp


def test_with_no_server_and_no_initdb_a_non_root_user_fails_and_nothing_runs(with_postgres, monkeypatch):
    ran: list[list[str]] = []
    monkeypatch.setattr(with_postgres, "answers", lambda target: False)
    monkeypatch.setattr(with_postgres, "server_bin_dir", lambda: None)
    monkeypatch.setattr(with_postgres.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(with_postgres, "install_postgresql", lambda: ran.append(["apt-get"]))
    monkeypatch.setattr(with_postgres.os, "execvp", exec_recorder(ran))

    with pytest.raises(SystemExit) as exited:
        with_postgres.main(["true"])

    assert (exited.value.code, ran) == (1, [])


def test_with_a_server_answering_the_command_runs_as_it_is(with_postgres, monkeypatch):
    ran: list[list[str]] = []
    monkeypatch.setattr(with_postgres, "answers", lambda target: True)
    monkeypatch.setattr(with_postgres.os, "execvp", exec_recorder(ran))
    monkeypatch.delenv(with_postgres.URL_VARIABLE, raising=False)

    with pytest.raises(Execed):
        with_postgres.main(["pytest", "-q"])

    assert ran == [["pytest", "-q"]]
