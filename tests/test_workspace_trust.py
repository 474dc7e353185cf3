"""The trust store: content hashes of a workspace's config file and instruction folders."""

from __future__ import annotations

import json
import os
import stat

from backend.workspace_trust import TRUST_FILE, TrustStore, config_file, folder


def skills(tmp_path):
    root = tmp_path / "ws" / ".overseer" / "skills"
    (root / "a").mkdir(parents=True)
    (root / "a" / "SKILL.md").write_text("---\ndescription: a\n---\nbody\n")
    return root


def test_what_is_trusted_is_kept_owner_only_by_resolved_path_and_hash(tmp_path):
    path = tmp_path / "overseer.yaml"
    path.write_text("model: x\n")
    store = TrustStore.in_data_dir(tmp_path / "data")
    os.symlink(tmp_path, tmp_path / "link")
    entry = store.trust(config_file(tmp_path / "link" / "overseer.yaml"))
    assert entry.path == str(path.resolve()) and entry.kind == "config"
    saved = tmp_path / "data" / TRUST_FILE
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert json.loads(saved.read_text())["entries"][0]["sha256"] == entry.sha256
    assert store.is_trusted(config_file(path))


def test_a_changed_byte_is_no_longer_trusted(tmp_path):
    path = tmp_path / "overseer.yaml"
    path.write_text("model: x\n")
    store = TrustStore.in_data_dir(tmp_path / "data")
    store.trust(config_file(path))
    path.write_text("model: y\n")
    assert not store.is_trusted(config_file(path))


def test_a_folder_s_hash_covers_every_file_s_name_and_content(tmp_path):
    root = skills(tmp_path)
    first = folder(root)
    assert first is not None and first.files == ("a/SKILL.md",)
    (root / "a" / "run.sh").write_text("echo hi\n")
    added = folder(root)
    os.rename(root / "a" / "run.sh", root / "a" / "run2.sh")
    renamed = folder(root)
    (root / "a" / "run2.sh").write_text("echo ho\n")
    edited = folder(root)
    assert len({first.sha256, added.sha256, renamed.sha256, edited.sha256}) == 4


def test_a_folder_without_files_needs_no_trust_and_a_symlink_loop_is_walked_once(tmp_path):
    root = tmp_path / "ws" / ".overseer" / "skills"
    assert folder(root) is None
    root.mkdir(parents=True)
    assert folder(root) is None
    (root / "a").mkdir()
    (root / "a" / "SKILL.md").write_text("x")
    os.symlink(root, root / "a" / "loop")
    assert folder(root) is not None


def test_revoking_forgets_and_a_store_that_cannot_be_read_trusts_nothing(tmp_path):
    root = skills(tmp_path)
    store = TrustStore.in_data_dir(tmp_path / "data")
    store.trust(folder(root))
    assert store.revoke(root) and not store.is_trusted(folder(root))
    assert not store.revoke(root)
    store.trust(folder(root))
    (tmp_path / "data" / TRUST_FILE).write_text("{not json")
    assert not store.is_trusted(folder(root)) and store.entries() == []


def test_a_host_write_keeps_the_trust_only_of_what_was_trusted_before_it(tmp_path):
    path = tmp_path / "overseer.yaml"
    path.write_text("model: x\n")
    store = TrustStore.in_data_dir(tmp_path / "data")
    store.trust(config_file(path))
    path.write_text("model: x\nmore: 1\n")
    store.keep_trust(path, before=b"model: x\n", after=b"model: x\nmore: 1\n")
    assert store.is_trusted(config_file(path))
    path.write_text("model: z\n")
    store.keep_trust(path, before=b"model: evil\n", after=b"model: z\n")
    assert not store.is_trusted(config_file(path))
