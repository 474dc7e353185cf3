"""`oauth:` of a remote server entry (backend/mcp/config.py): who Overseer is to its authorization
server, refused where it cannot apply, and its secret never shown."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_client import client_metadata, configured_client

URL = "https://docs.example.com/mcp"


def test_a_remote_entry_without_an_authorization_header_signs_in_with_oauth():
    assert McpServerConfig(type="http", url=URL).signs_in_with_oauth
    assert McpServerConfig(type="sse", url=URL, headers={"X-Team": "a"}).signs_in_with_oauth
    assert not McpServerConfig(type="http", url=URL, headers={"authorization": "Bearer t"}).signs_in_with_oauth
    assert not McpServerConfig(command="server").signs_in_with_oauth


@pytest.mark.parametrize(
    ("entry", "names"),
    [
        ({"command": "server", "oauth": {}}, "'oauth' not allowed"),
        ({"type": "http", "url": URL, "headers": {"Authorization": "Bearer t"}, "oauth": {}}, "exclude each other"),
        ({"type": "http", "url": URL, "oauth": {"client_secret": "s"}}, "needs `oauth.client_id`"),
        ({"type": "http", "url": URL, "oauth": {"client": "x"}}, "client"),
        ({"type": "http", "url": URL, "oauth": {"callback_port": 70000}}, "callback_port"),
    ],
)
def test_an_oauth_block_that_cannot_apply_is_refused_naming_why(entry, names):
    with pytest.raises(ValidationError, match=names):
        McpServerConfig.model_validate(entry)


def test_a_configured_client_replaces_registration_and_its_secret_is_never_shown():
    config = McpServerConfig.model_validate(
        {"type": "http", "url": URL, "oauth": {"client_id": "cid", "client_secret": "cs-SECRET", "scopes": ["a", "b"]}}
    )
    client = configured_client(config)
    metadata = client_metadata(config, "http://127.0.0.1:8000/oauth/callback")
    assert client is not None and (client.client_id, client.client_secret) == ("cid", "cs-SECRET")
    assert (client.token_endpoint_auth_method, metadata.scope) == ("client_secret_post", "a b")
    assert "cs-SECRET" not in repr(config) and "cs-SECRET" not in config.model_dump_json()
    assert configured_client(McpServerConfig(type="http", url=URL)) is None
