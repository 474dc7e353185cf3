"""Authentication: the single-user token, logins, JWT sessions, API keys, roles and bind safety."""

from __future__ import annotations

import base64
import json
import stat
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from backend.auth import (
    Authenticator,
    AuthError,
    Principal,
    UserConfig,
    check_bind,
    hash_password,
    is_loopback,
)
from backend.auth_store import read_or_create_secret

from authlib.jose import JsonWebToken  # noqa: E402  (after backend.auth, which quiets its import warning)


class FakeClock:
    """A settable time source, so expiry is tested without sleeping."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def alice_hash() -> str:
    return hash_password("alice-password")


@pytest.fixture(scope="module")
def bob_hash() -> str:
    return hash_password("bob-password")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def users(alice_hash: str, bob_hash: str) -> list[UserConfig]:
    return [
        UserConfig(username="alice", password_hash=alice_hash, role="approver"),
        UserConfig(username="bob", password_hash=bob_hash),
    ]


def make_auth(data_dir: Path, *, token: str | None = None, users: list[UserConfig] | None = None,
              clock: FakeClock | None = None) -> Authenticator:
    return Authenticator(data_dir=data_dir, token=token, users=users or [], clock=clock or FakeClock())


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


# The single-user token


def test_token_is_generated_once_and_reused_with_owner_only_files(tmp_path):
    data_dir = tmp_path / "data"
    first = make_auth(data_dir)
    second = make_auth(data_dir)

    assert len(first.token) >= 40
    assert second.token == first.token
    assert (data_dir / "token").read_text().strip() == first.token
    assert mode(data_dir / "token") == 0o600
    assert mode(data_dir / "jwt_secret") == 0o600
    assert first.token not in (data_dir / "jwt_secret").read_text()


def test_overseer_token_wins_over_the_stored_token(tmp_path):
    stored = make_auth(tmp_path).token
    auth = make_auth(tmp_path, token="from-the-environment")

    assert auth.token == "from-the-environment"
    assert auth.authenticate("from-the-environment") == Principal(name="admin", role="admin", kind="token")
    assert auth.authenticate(stored) is None


def test_empty_overseer_token_counts_as_unset(tmp_path):
    auth = make_auth(tmp_path, token="")

    assert auth.token == (tmp_path / "token").read_text().strip()
    assert auth.authenticate("") is None


def test_a_stored_secret_with_loose_permissions_is_tightened(tmp_path):
    (tmp_path / "token").write_text("an-existing-token\n")
    (tmp_path / "token").chmod(0o644)

    assert make_auth(tmp_path).token == "an-existing-token"
    assert mode(tmp_path / "token") == 0o600


def test_processes_starting_at_once_share_one_secret(tmp_path):
    path = tmp_path / "secret"
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(read_or_create_secret(path))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert len(seen) == 8
    assert set(seen) == {path.read_text().strip()}
    assert [p.name for p in tmp_path.iterdir()] == ["secret"]


def test_an_empty_token_file_is_replaced_by_a_new_token(tmp_path):
    (tmp_path / "token").write_text("")

    auth = make_auth(tmp_path)

    assert auth.token
    assert (tmp_path / "token").read_text().strip() == auth.token


# Login


def test_single_user_login_with_the_token_gives_an_admin_session(tmp_path):
    auth = make_auth(tmp_path)

    jwt = auth.login("anyone", auth.token)

    assert not auth.multi_user
    assert auth.authenticate(jwt) == Principal(name="admin", role="admin", kind="token")


def test_single_user_login_with_a_wrong_password_is_refused(tmp_path):
    auth = make_auth(tmp_path)

    with pytest.raises(AuthError):
        auth.login("admin", auth.token + "x")


def test_multi_user_login_checks_the_argon2_hash(tmp_path, users):
    auth = make_auth(tmp_path, users=users)

    jwt = auth.login("alice", "alice-password")

    assert auth.multi_user
    assert auth.authenticate(jwt) == Principal(name="alice", role="approver", kind="user")


def test_wrong_password_and_unknown_user_are_refused_with_the_same_message(tmp_path, users):
    auth = make_auth(tmp_path, users=users)

    with pytest.raises(AuthError) as wrong_password:
        auth.login("alice", "bob-password")
    with pytest.raises(AuthError) as unknown_user:
        auth.login("mallory", "alice-password")

    assert str(wrong_password.value) == str(unknown_user.value)
    assert "alice" not in str(wrong_password.value)


def test_the_token_is_not_a_password_in_multi_user_mode(tmp_path, users):
    auth = make_auth(tmp_path, users=users)

    with pytest.raises(AuthError):
        auth.login("admin", auth.token)


def test_a_plain_password_in_users_config_is_rejected():
    with pytest.raises(ValidationError):
        UserConfig(username="carol", password_hash="hunter2")


def test_a_user_listed_twice_is_rejected(tmp_path, alice_hash):
    twice = [UserConfig(username="alice", password_hash=alice_hash)] * 2

    with pytest.raises(ValueError):
        make_auth(tmp_path, users=twice)


# JWT sessions


def test_jwt_round_trip_gives_the_role_and_its_claims(tmp_path, users, clock):
    auth = make_auth(tmp_path, users=users, clock=clock)

    jwt = auth.login("bob", "bob-password")
    header, payload, _ = jwt.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))

    assert json.loads(base64.urlsafe_b64decode(header + "=="))["alg"] == "HS256"
    jti = claims.pop("jti")
    assert claims == {"sub": "bob", "role": "viewer", "kind": "user",
                      "iat": int(clock.now), "exp": int(clock.now) + 24 * 3600}
    assert isinstance(jti, str) and len(jti) >= 16
    assert auth.authenticate(jwt) == Principal(name="bob", role="viewer", kind="user")


def test_expired_jwt_is_refused(tmp_path, clock):
    auth = make_auth(tmp_path, clock=clock)
    jwt = auth.login("admin", auth.token)

    clock.now += 24 * 3600 - 1
    assert auth.authenticate(jwt) is not None
    clock.now += 2
    assert auth.authenticate(jwt) is None


def test_a_signed_out_jwt_is_refused_and_others_are_not_also_after_a_restart(tmp_path, users, clock):
    auth = make_auth(tmp_path, users=users, clock=clock)
    signed_out, other = auth.login("bob", "bob-password"), auth.login("bob", "bob-password")

    assert auth.revoke_jwt(signed_out) is True
    assert auth.authenticate(signed_out) is None
    assert auth.authenticate(other) is not None
    restarted = make_auth(tmp_path, users=users, clock=clock)
    assert restarted.authenticate(signed_out) is None
    assert restarted.authenticate(other) is not None
    assert mode(tmp_path / "revoked_jwts.json") == 0o600


def test_the_revocation_list_forgets_what_has_expired_anyway(tmp_path, clock):
    auth = make_auth(tmp_path, clock=clock)
    auth.revoke_jwt(auth.login("admin", auth.token))
    clock.now += 24 * 3600 + 1
    auth.revoke_jwt(auth.login("admin", auth.token))
    assert len(json.loads((tmp_path / "revoked_jwts.json").read_text())["revoked"]) == 1


def test_only_a_valid_jwt_can_be_revoked_and_the_token_stays_valid(tmp_path):
    auth = make_auth(tmp_path)
    assert auth.revoke_jwt(auth.token) is False
    assert auth.revoke_jwt("a.b.c") is False
    assert auth.authenticate(auth.token) is not None
    assert not (tmp_path / "revoked_jwts.json").exists()


def test_a_jwt_without_an_id_is_refused_as_it_could_not_be_signed_out(tmp_path, users):
    auth = make_auth(tmp_path, users=users)
    header, payload, _ = auth.login("bob", "bob-password").split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    del claims["jti"]
    key = (tmp_path / "jwt_secret").read_text().strip().encode()
    unsigned_out = JsonWebToken(["HS256"]).encode({"alg": "HS256"}, claims, key).decode()
    assert auth.authenticate(unsigned_out) is None


def test_an_unreadable_revocation_list_refuses_every_jwt(tmp_path, users):
    auth = make_auth(tmp_path, users=users)
    jwt = auth.login("bob", "bob-password")
    (tmp_path / "revoked_jwts.json").write_text("{not json")
    assert auth.authenticate(jwt) is None
    assert auth.authenticate(auth.token) is not None


def test_tampered_jwt_is_refused(tmp_path, users):
    auth = make_auth(tmp_path, users=users)
    header, payload, signature = auth.login("bob", "bob-password").split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    promoted = b64({**claims, "sub": "alice"})
    unsigned = b64({"alg": "none", "typ": "JWT"})
    foreign = make_auth(tmp_path / "elsewhere", users=users).login("bob", "bob-password")

    for forged in (f"{header}.{promoted}.{signature}", f"{unsigned}.{payload}.", foreign,
                   f"{header}.{payload}.{signature[:-2]}"):
        assert auth.authenticate(forged) is None


def test_jwt_of_a_user_later_removed_from_config_is_refused(tmp_path, users):
    jwt = make_auth(tmp_path, users=users).login("alice", "alice-password")

    without_alice = make_auth(tmp_path, users=[u for u in users if u.username != "alice"])

    assert without_alice.authenticate(jwt) is None


def test_jwt_takes_the_role_from_the_current_config(tmp_path, users):
    jwt = make_auth(tmp_path, users=users).login("alice", "alice-password")

    demoted = [u.model_copy(update={"role": "viewer"}) if u.username == "alice" else u for u in users]

    principal = make_auth(tmp_path, users=demoted).authenticate(jwt)

    assert principal == Principal(name="alice", role="viewer", kind="user")


def test_user_jwt_is_refused_after_switching_to_single_user(tmp_path, users):
    jwt = make_auth(tmp_path, users=users).login("alice", "alice-password")

    assert make_auth(tmp_path).authenticate(jwt) is None


@pytest.mark.parametrize(
    "credential", [None, "", "garbage", "a.b.c", "ovr_not-a-key", "é.é.é", "\udc80", "x" * 5000]
)
def test_unknown_credentials_are_refused(tmp_path, credential):
    assert make_auth(tmp_path).authenticate(credential) is None


# API keys


def test_api_key_authenticates_with_its_role_and_is_stored_only_as_a_hash(tmp_path):
    auth = make_auth(tmp_path)

    key = auth.create_api_key("ci", role="viewer")

    assert key.startswith("ovr_")
    assert auth.authenticate(key) == Principal(name="ci", role="viewer", kind="api_key")
    stored = (tmp_path / "api_keys.json").read_text()
    assert key not in stored
    assert key[8:] not in stored
    assert mode(tmp_path / "api_keys.json") == 0o600


def test_api_keys_default_to_approver_and_list_without_their_hash(tmp_path, clock):
    auth = make_auth(tmp_path, clock=clock)
    key = auth.create_api_key("bot")

    [listed] = auth.list_api_keys()

    assert listed == {"name": "bot", "role": "approver", "created_at": "2023-11-14T22:13:20+00:00",
                      "prefix": key[:8]}


def test_revoked_api_key_is_refused(tmp_path):
    auth = make_auth(tmp_path)
    key = auth.create_api_key("ci")
    session = auth.issue_jwt(auth.authenticate(key))

    assert auth.revoke_api_key("ci")
    assert not auth.revoke_api_key("ci")
    assert auth.authenticate(key) is None
    assert auth.authenticate(session) is None
    assert auth.list_api_keys() == []


def test_a_key_revoked_by_another_process_is_refused_at_once(tmp_path):
    server = make_auth(tmp_path)
    key = server.create_api_key("ci")
    assert server.authenticate(key) is not None

    assert make_auth(tmp_path).revoke_api_key("ci")

    assert server.authenticate(key) is None


def test_api_key_names_are_unique(tmp_path):
    auth = make_auth(tmp_path)
    auth.create_api_key("ci")

    with pytest.raises(ValueError):
        auth.create_api_key("ci")


def test_a_corrupt_api_key_file_matches_no_key(tmp_path):
    auth = make_auth(tmp_path)
    key = auth.create_api_key("ci")
    (tmp_path / "api_keys.json").write_text("{not json")

    assert auth.authenticate(key) is None
    with pytest.raises(ValueError):
        auth.list_api_keys()


# Roles and binding


def test_principal_can_ranks_roles():
    approver = Principal(name="a", role="approver", kind="user")

    assert approver.can("viewer")
    assert approver.can("approver")
    assert not approver.can("admin")
    assert Principal(name="root", role="admin", kind="token").can("approver")
    assert not Principal(name="v", role="viewer", kind="api_key").can("approver")


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"]
)
def test_loopback_hosts_are_recognised(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "", "192.168.1.10", "example.com", "128.0.0.1"])
def test_other_hosts_are_not_loopback(host):
    assert not is_loopback(host)


def test_check_bind_refuses_all_interfaces_without_token_or_users():
    with pytest.raises(AuthError):
        check_bind("0.0.0.0", token_configured=False, users=[])


def test_check_bind_allows_loopback_and_configured_credentials(alice_hash):
    alice = UserConfig(username="alice", password_hash=alice_hash)

    check_bind("127.0.0.1", token_configured=False, users=[])
    check_bind("0.0.0.0", token_configured=True, users=[])
    check_bind("0.0.0.0", token_configured=False, users=[alice])


def test_hash_password_makes_argon2id_hashes():
    assert hash_password("pw").startswith("$argon2id$")
