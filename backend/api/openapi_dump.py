"""The REST API's OpenAPI document, built offline, and the dashboard's types generated from it.

`web/src/api.gen.ts` is openapi-typescript's rendering of the document `create_app` serves at
`/openapi.json`, checked in so the dashboard builds without a backend; `web/src/types.ts` names
its schemas. `tests/api/test_openapi_types.py` regenerates it and fails while the checked-in file
differs. Regenerate with `.venv/bin/python -m backend.api.openapi_dump` (or `npm run types` in web/).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from backend.api.app import create_app
from backend.config import Settings

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
TYPES_FILE = WEB / "src" / "api.gen.ts"
GENERATOR = WEB / "node_modules" / "openapi-typescript" / "bin" / "cli.js"
REGENERATE = ".venv/bin/python -m backend.api.openapi_dump"

HEADER = f"""\
// GENERATED from the REST API's OpenAPI document by openapi-typescript: do not edit.
// Regenerate after changing a route or a model: `{REGENERATE}` (or `npm run types` in web/).
// `make test` fails while this file is out of date (tests/api/test_openapi_types.py).
"""


class _ArgumentsOnly(Settings):
    """Settings from the arguments alone (no environment, no overseer.yaml): the same document anywhere."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def openapi_document() -> dict[str, Any]:
    """The document the app serves at `/openapi.json`, from an app built but never started."""
    with tempfile.TemporaryDirectory(prefix="overseer-openapi-") as scratch:
        root = Path(scratch)
        settings = _ArgumentsOnly(data_dir=root / "data", workspace=root, model="openai/none", api_key="none")
        return create_app(settings, web_dist=root / "no-dashboard").openapi()


def document_text(document: dict[str, Any]) -> str:
    """The document as JSON. Keys stay in FastAPI's order (routes as registered, schemas by name,
    properties as the models declare them), which no hash seed or environment changes, so the types
    read in the models' order."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def generate_types(out: Path, document: dict[str, Any] | None = None) -> Path:
    """Write the TypeScript for `document` (default: the app's) to `out`, by web/'s openapi-typescript."""
    node = shutil.which("node")
    if node is None or not GENERATOR.is_file():
        raise RuntimeError(f"no openapi-typescript: run `cd web && npm ci` (needs node and {GENERATOR})")
    with tempfile.TemporaryDirectory(prefix="overseer-openapi-") as scratch:
        source = Path(scratch) / "openapi.json"
        source.write_text(document_text(document or openapi_document()), encoding="utf-8")
        generated = Path(scratch) / "api.gen.ts"
        run = subprocess.run(
            # A field with a default stays optional, as a request may omit it; types.ts's `Sent`
            # makes every field of a response present.
            [node, str(GENERATOR), str(source), "--default-non-nullable", "false", "-o", str(generated)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=WEB,
        )
        if run.returncode != 0:
            raise RuntimeError(f"openapi-typescript failed: {run.stderr.strip() or run.stdout.strip()}")
        out.write_text(HEADER + generated.read_text(encoding="utf-8"), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m backend.api.openapi_dump [--json]`: rewrite web/src/api.gen.ts, or print the document."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--json"]:
        sys.stdout.write(document_text(openapi_document()))
        return 0
    if args:
        sys.stderr.write("usage: python -m backend.api.openapi_dump [--json]\n")
        return 2
    print(f"wrote {generate_types(TYPES_FILE).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
