"""Where a session may work: under the allowed roots, never the data dir, near it or the config's folder."""

from __future__ import annotations

import pytest

from backend.engine.workspaces import WorkspaceRefused, WorkspaceRoots


@pytest.fixture
def tree(tmp_path):
    for folder in ("data/agents/ops/workspace", "work/sub", "projects/app", "etc/overseer", "elsewhere"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "etc/overseer/overseer.yaml").write_text("model: x\n")
    return tmp_path


def roots_of(tree, **overrides) -> WorkspaceRoots:
    values = {
        "roots": [tree / "projects"],
        "configured": lambda: [tree / "work", tree / "data/agents/ops/workspace"],
        "data_dir": tree / "data",
        "config_file": tree / "etc/overseer/overseer.yaml",
        **overrides,
    }
    return WorkspaceRoots(**values)


@pytest.mark.parametrize(
    "folder, words",
    [
        ("data", "is the data dir"),
        (".", "holds the data dir"),
        ("data/agents", "inside the data dir"),
        ("etc/overseer", "config file"),
        ("etc", "holds the host's config file"),
        ("elsewhere", "under none of the allowed roots"),
    ],
)
def test_a_workspace_near_the_hosts_secrets_or_outside_the_roots_is_refused_saying_why(tree, folder, words):
    with pytest.raises(WorkspaceRefused, match=words):
        roots_of(tree).check(tree / folder)


def test_a_symlink_is_judged_by_where_it_leads(tree):
    (tree / "work/secrets").symlink_to(tree / "data")
    with pytest.raises(WorkspaceRefused, match="is the data dir"):
        roots_of(tree).check(tree / "work/secrets")


def test_an_admin_may_name_any_folder_under_a_root_and_an_agents_own_workspace_in_the_data_dir(tree):
    workspaces = roots_of(tree)
    assert workspaces.check(tree / "work/sub") == (tree / "work/sub").resolve()
    assert workspaces.check(tree / "projects/app") == (tree / "projects/app").resolve()
    assert workspaces.check(tree / "data/agents/ops/workspace").is_dir()


def test_anyone_else_chooses_one_of_the_listed_workspaces_exactly(tree):
    workspaces = roots_of(tree)
    assert workspaces.choices() == [(tree / p).resolve() for p in ("work", "data/agents/ops/workspace", "projects")]
    assert workspaces.check(tree / "projects", chooser=True) == (tree / "projects").resolve()
    with pytest.raises(WorkspaceRefused, match="not one of the allowed workspaces"):
        workspaces.check(tree / "projects/app", chooser=True)


def test_a_root_that_holds_the_data_dir_is_never_offered(tree):
    workspaces = roots_of(tree, roots=[tree])
    assert tree.resolve() not in workspaces.choices()
    with pytest.raises(WorkspaceRefused, match="holds the data dir"):
        workspaces.check(tree, chooser=True)


def test_a_projects_own_config_does_not_fence_the_workspace_it_configures(tree):
    (tree / "work/overseer.yaml").write_text("model: x\n")
    workspaces = roots_of(tree, config_file=tree / "work/overseer.yaml")
    assert workspaces.check(tree / "work") == (tree / "work").resolve()
