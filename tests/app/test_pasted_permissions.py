"""A host started with a pasted Claude Code block: `defaultMode: plan` starts new sessions in the
plan mode, `additionalDirectories` are folders sessions may work in (issue 35, item 11)."""

from __future__ import annotations

import pytest

from backend.config import PermissionsConfig
from backend.domain.errors import Forbidden
from backend.domain.session_options import SessionOptions
from backend.testing.harness import scripted_host

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_default_mode_plan_starts_new_sessions_in_the_plan_mode_unless_one_is_asked_for(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool, permissions=PermissionsConfig(defaultMode="plan")) as h:
        assert (await h.host.runner.create()).mode == "plan"
        assert (await h.host.runner.create(options=SessionOptions(mode="agent"))).mode == "agent"


async def test_without_a_default_mode_new_sessions_start_in_the_agent_mode(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool) as h:
        assert (await h.host.runner.create()).mode == "agent"


async def test_additional_directories_are_folders_a_session_may_work_in(tmp_path, pool):
    extra, other = tmp_path / "docs", tmp_path / "elsewhere"
    extra.mkdir()
    other.mkdir()
    permissions = PermissionsConfig(additionalDirectories=[str(extra)])
    async with scripted_host(tmp_path, [], pool=pool, permissions=permissions) as h:
        session = await h.host.runner.create(options=SessionOptions(workspace=str(extra)))
        assert session.workspace == str(extra.resolve())
        with pytest.raises(Forbidden):
            await h.host.runner.create(options=SessionOptions(workspace=str(other)))


async def test_rules_saved_from_the_dashboard_keep_the_blocks_default_mode(tmp_path, pool):
    async with scripted_host(tmp_path, [], pool=pool, permissions=PermissionsConfig(defaultMode="plan")) as h:
        saved = h.host.policies.set_permissions(PermissionsConfig.model_validate({"allow": ["Bash(ls)"]}))
        assert (saved.allow, saved.defaultMode) == (["Bash(ls)"], "plan")
        assert "defaultMode: plan" in h.host.settings.writable_config_file.read_text()
