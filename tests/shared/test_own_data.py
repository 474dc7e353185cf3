"""Which paths are Overseer's own (shared/own_data.py): the deepest folder holding a path decides."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shared.own_data import OwnFolder, own_folder_of, own_identities, refusal


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    (root / ".overseer" / "checkpoints").mkdir(parents=True)
    (root / ".overseer" / "agents" / "bob" / "workspace").mkdir(parents=True)
    return root


def folders(home: Path) -> list[OwnFolder]:
    data = home / ".overseer"
    return [OwnFolder("data dir", data), OwnFolder("checkpoints dir", data / "checkpoints")]


def test_a_path_in_the_data_dir_is_overseers_though_the_workspace_holds_it(home: Path) -> None:
    found = own_folder_of(folders(home), home / ".overseer" / "overseer.db", [home])
    assert found == OwnFolder("data dir", home / ".overseer")


def test_the_deepest_own_folder_names_the_path(home: Path) -> None:
    found = own_folder_of(folders(home), home / ".overseer" / "checkpoints" / "ws" / "HEAD", [home])
    assert found is not None and found.what == "checkpoints dir"


def test_a_workspace_inside_the_data_dir_is_usable_but_nothing_above_it(home: Path) -> None:
    bob = home / ".overseer" / "agents" / "bob" / "workspace"
    assert own_folder_of(folders(home), bob / "notes.md", [bob]) is None
    assert own_folder_of(folders(home), bob.parent / "settings.json", [bob]) is not None


def test_the_data_dir_given_as_a_workspace_is_still_refused(home: Path) -> None:
    data = home / ".overseer"
    assert own_folder_of(folders(home), data / "overseer.db", [data]) is not None


def test_a_path_outside_every_own_folder_is_not_overseers(home: Path) -> None:
    assert own_folder_of(folders(home), home / "project" / "main.py", [home]) is None
    assert own_folder_of([], home / ".overseer" / "overseer.db", [home]) is None


def test_an_own_folder_configured_through_a_symlink_is_found_by_where_it_leads(home: Path) -> None:
    os.symlink(home / ".overseer", home / "alias")
    found = own_folder_of([OwnFolder("data dir", home / "alias")], home / ".overseer" / "overseer.db", [home])
    assert found is not None and found.path == home / "alias"
    assert own_identities([OwnFolder("data dir", home / "alias")]) == own_identities(folders(home)[:1])


def test_the_refusal_names_the_path_as_written_and_which_folder_it_is(home: Path) -> None:
    text = refusal("link/overseer.db", folders(home)[0])
    data = home / ".overseer"
    assert text == f"'link/overseer.db' is Overseer's own data (its data dir, {data}), never open to tools"


def test_an_own_folder_named_by_a_symlink_follows_the_link_when_it_is_pointed_elsewhere(home: Path) -> None:
    first, second = home / "first", home / "second"
    first.mkdir()
    second.mkdir()
    os.symlink(first, home / "data")
    own = [OwnFolder("data dir", home / "data")]
    assert own_folder_of(own, first / "overseer.db", [home]) is not None
    os.unlink(home / "data")
    os.symlink(second, home / "data")
    assert own_folder_of(own, second / "overseer.db", [home]) is not None
    assert own_folder_of(own, first / "overseer.db", [home]) is None
