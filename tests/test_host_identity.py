"""A host's id: configured, or kept in its data dir, or derived once and then kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config import Settings
from backend.host_identity import HOST_ID_FILE, remember_host_id


def test_an_unset_host_id_is_derived_from_the_data_dir_and_stays_the_same(tmp_path: Path):
    first = Settings(data_dir=tmp_path / "one").host_id
    assert first == Settings(data_dir=tmp_path / "one").host_id
    assert first != Settings(data_dir=tmp_path / "two").host_id


def test_a_kept_host_id_wins_over_the_derived_one(tmp_path: Path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    remember_host_id(data_dir, "worker-7")
    assert Settings(data_dir=data_dir).host_id == "worker-7"
    remember_host_id(data_dir, "someone-else")  # an id kept already is never overwritten
    assert (data_dir / HOST_ID_FILE).read_text().strip() == "worker-7"


def test_a_configured_host_id_is_used_as_given(tmp_path: Path):
    assert Settings(data_dir=tmp_path, host_id="eu-1").host_id == "eu-1"


@pytest.mark.parametrize("bad", ["-x", "a b", "x" * 65, "a/b", "é"])
def test_a_host_id_that_could_not_name_a_host_is_refused(tmp_path: Path, bad: str):
    with pytest.raises(ValueError, match="host_id"):
        Settings(data_dir=tmp_path, host_id=bad)
