"""The dashboard's API types (web/src/api.gen.ts) are what openapi-typescript makes of the app's
OpenAPI document now: a route or model changed without regenerating them fails here.

The generator is web/'s own pinned openapi-typescript run by node (no network); the document is
built from an app that is never started.
"""

from __future__ import annotations

from pathlib import Path

from backend.api.openapi_dump import REGENERATE, TYPES_FILE, document_text, generate_types, openapi_document


def test_the_checked_in_types_are_generated_from_the_current_document(tmp_path: Path):
    fresh = generate_types(tmp_path / "api.gen.ts").read_text(encoding="utf-8")
    checked_in = TYPES_FILE.read_text(encoding="utf-8")
    assert fresh == checked_in, (
        f"web/src/api.gen.ts is out of date with the API's OpenAPI document: run `{REGENERATE}` "
        "(or `npm run types` in web/), then check the dashboard still builds (`cd web && npm run build`)"
    )


def test_the_document_is_the_same_on_every_build():
    # Built twice and compared as text: nothing in it may depend on the scratch folder each build
    # makes (its data dir, its workspace), or the check above would fail on every other machine.
    first, second = document_text(openapi_document()), document_text(openapi_document())
    assert first == second
    assert "overseer-openapi-" not in first
