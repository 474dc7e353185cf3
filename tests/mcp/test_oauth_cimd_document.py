"""`oauth.client_metadata_url` in the config, and the document `overseer mcp client-metadata`
prints for it (backend/mcp/oauth_cimd.py, backend/mcp_cli.py)."""

from __future__ import annotations

import json

import pytest
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata
from pydantic import ValidationError

from backend.cli import main
from backend.mcp.config import McpServerConfig
from backend.mcp.oauth_cimd import client_metadata_document, redirect_uris

URL = "https://overseer.example.org/oauth/client.json"


def remote(**oauth: object) -> McpServerConfig:
    return McpServerConfig(type="http", url="https://docs.example.com/mcp", oauth=oauth)


@pytest.mark.parametrize(
    "url",
    [
        "http://overseer.example.org/client.json",  # the authorization server fetches it: https only
        "https://overseer.example.org",
        "https://overseer.example.org/",
        "https:///client.json",
        "https://overseer.example.org/client.json#me",
        "overseer.example.org/client.json",
    ],
)
def test_a_client_metadata_url_that_cannot_be_a_client_id_is_refused_when_the_config_is_read(url: str):
    with pytest.raises(ValidationError, match="client_metadata_url"):
        remote(client_metadata_url=url)


def test_a_client_metadata_url_and_a_client_id_cannot_both_name_the_client():
    with pytest.raises(ValidationError, match="exclude each other"):
        remote(client_metadata_url=URL, client_id="overseer")


def test_the_document_names_its_url_and_every_callback_a_sign_in_may_use():
    servers = {"docs": remote(client_metadata_url=URL, callback_port=8765), "other": remote()}
    uris = redirect_uris(URL, servers, dashboard_urls=["http://127.0.0.1:8000/", "http://localhost:8000"])
    document = client_metadata_document(URL, uris)
    assert document["client_id"] == URL
    assert document["redirect_uris"] == [
        "http://127.0.0.1:8000/oauth/callback",
        "http://localhost:8000/oauth/callback",
        "http://127.0.0.1:8765/oauth/callback",  # `overseer mcp login` on the configured port
    ]
    assert document["token_endpoint_auth_method"] == "none" and document["application_type"] == "native"
    assert "refresh_token" in document["grant_types"]
    # As an authorization server reads it: well-formed client metadata.
    assert OAuthClientInformationFull.model_validate(document).client_id == URL
    OAuthClientMetadata.model_validate(document)


def test_without_a_callback_port_the_terminal_callback_is_listed_without_a_port():
    uris = redirect_uris(URL, {"docs": remote(client_metadata_url=URL)}, dashboard_urls=[])
    assert uris == ["http://127.0.0.1/oauth/callback"]  # RFC 8252 7.3: any port on loopback


def test_a_dashboard_on_another_host_makes_the_client_a_web_one():
    document = client_metadata_document(URL, ["https://overseer.example.org/oauth/callback"])
    assert document["application_type"] == "web"


def test_overseer_mcp_client_metadata_prints_the_document_for_the_configured_url(tmp_path, monkeypatch, capsys):
    servers = {"docs": {"type": "http", "url": "https://docs.example.com/mcp",
                        "oauth": {"client_metadata_url": URL, "callback_port": 8765}}}  # fmt: skip
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OVERSEER_MCP_SERVERS", json.dumps(servers))
    monkeypatch.setenv("OVERSEER_PORT", "8123")
    monkeypatch.chdir(tmp_path)
    assert main(["mcp", "client-metadata"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert document["client_id"] == URL
    assert document["redirect_uris"] == ["http://127.0.0.1:8123/oauth/callback", "http://127.0.0.1:8765/oauth/callback"]
    assert URL in err and "docs" in err


def test_overseer_mcp_client_metadata_refuses_a_url_that_cannot_be_a_client_id(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OVERSEER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OVERSEER_MCP_SERVERS", "{}")
    monkeypatch.chdir(tmp_path)
    assert main(["mcp", "client-metadata", "http://overseer.example.org/client.json"]) == 2
    assert main(["mcp", "client-metadata"]) == 2  # no URL given, none configured
    _, err = capsys.readouterr()
    assert "https://" in err and "no server's `oauth:` names one" in err
