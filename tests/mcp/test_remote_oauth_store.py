"""Remote servers' OAuth tokens at rest (backend/mcp/oauth_store.py): encrypted, owner-only, and a
file that cannot be read means "sign in again", never a crash."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from mcp.client.auth import TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from backend.mcp.oauth_store import OAuthVault

TOKEN = OAuthToken(access_token="acc-SECRET-123", refresh_token="ref-SECRET-456", expires_in=3600)
CLIENT = OAuthClientInformationFull(
    client_id="overseer-client", client_secret="cs-SECRET-789", redirect_uris=["http://127.0.0.1:8000/oauth/callback"]
)


async def test_tokens_and_registration_come_back_through_the_sdk_storage_protocol(tmp_path: Path):
    storage: TokenStorage = OAuthVault(tmp_path / "oauth").storage_for("docs")
    assert await storage.get_tokens() is None
    await storage.set_client_info(CLIENT)
    await storage.set_tokens(TOKEN)
    again = OAuthVault(tmp_path / "oauth").storage_for("docs")  # as after a restart
    assert await again.get_tokens() == TOKEN
    assert await again.get_client_info() == CLIENT
    assert await OAuthVault(tmp_path / "oauth").storage_for("other").get_tokens() is None


async def test_nothing_secret_is_readable_on_disk_and_every_file_is_owner_only(tmp_path: Path):
    vault = OAuthVault(tmp_path / "oauth")
    await vault.storage_for("docs").set_tokens(TOKEN)
    await vault.storage_for("docs").set_client_info(CLIENT)
    files = sorted((tmp_path / "oauth").iterdir())
    assert [f.name for f in files] == ["docs.json.enc", "key"]
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        assert b"SECRET" not in file.read_bytes()
    assert stat.S_IMODE((tmp_path / "oauth").stat().st_mode) == 0o700
    assert "SECRET" not in repr(vault.storage_for("docs"))


async def test_a_file_that_does_not_decrypt_reads_as_signed_out(tmp_path: Path):
    vault = OAuthVault(tmp_path / "oauth")
    await vault.storage_for("docs").set_tokens(TOKEN)
    (tmp_path / "oauth" / "key").unlink()  # a new key, as after restoring a backup without it
    assert await OAuthVault(tmp_path / "oauth").storage_for("docs").get_tokens() is None
    (tmp_path / "oauth" / "docs.json.enc").write_bytes(b"garbage")
    assert not OAuthVault(tmp_path / "oauth").has_tokens("docs")


def test_signing_out_forgets_the_tokens_and_names_cannot_leave_the_folder(tmp_path: Path):
    vault = OAuthVault(tmp_path / "oauth")
    vault.write("docs", vault.read("docs").model_copy(update={"tokens": TOKEN}))
    assert vault.has_tokens("docs")
    vault.forget("docs")
    assert not vault.has_tokens("docs")
    with pytest.raises(ValueError):
        vault.read("../escape")
