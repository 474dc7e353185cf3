"""One server's entry written into a person's YAML config file: the rest stays as they wrote it."""

from __future__ import annotations

from pathlib import Path

import yaml

from backend.app.servers_file import write_server_entry

FILE = """\
# top comment
model: openai/x  # mine
mcpServers:
  # the first one
  alpha:
    command: a   # keep me
  # the second one
  beta:
    command: b
    args: [--flag]

# before permissions
permissions:
  allow: []
"""


def written(tmp_path: Path, text: str | None, name: str, entry: dict | None) -> str:
    path = tmp_path / "overseer.yaml"
    if text is not None:
        path.write_text(text)
    write_server_entry(path, name, entry)
    return path.read_text()


def test_a_new_server_goes_at_the_end_of_the_section_and_every_comment_stays(tmp_path):
    text = written(tmp_path, FILE, "gamma", {"command": "c", "args": ["x"]})
    assert yaml.safe_load(text)["mcpServers"]["gamma"] == {"command": "c", "args": ["x"]}
    assert list(yaml.safe_load(text)["mcpServers"]) == ["alpha", "beta", "gamma"]
    for line in FILE.splitlines():
        assert line in text.splitlines()
    assert text.index("gamma:") < text.index("# before permissions")


def test_a_replaced_server_changes_only_its_own_values_and_keeps_their_comments(tmp_path):
    text = written(tmp_path, FILE, "alpha", {"command": "a2"})
    assert text == FILE.replace("    command: a   # keep me\n", "    command: a2  # keep me\n")


def test_a_removed_server_takes_its_lines_and_leaves_its_neighbours_comments(tmp_path):
    text = written(tmp_path, FILE, "beta", None)
    assert "beta" not in yaml.safe_load(text)["mcpServers"]
    assert "  # the second one\n" in text and "    args: [--flag]\n" not in text
    assert "# before permissions\n" in text


def test_removing_the_last_server_leaves_an_empty_mapping_not_null(tmp_path):
    text = written(tmp_path, "mcpServers:\n  only:\n    command: o\nmodel: m\n", "only", None)
    assert yaml.safe_load(text) == {"mcpServers": {}, "model": "m"}


def test_a_file_without_servers_gets_a_section_and_a_missing_file_is_created(tmp_path):
    text = written(tmp_path, "# just a comment\nmodel: m\n", "new", {"command": "n"})
    assert text.startswith("# just a comment\nmodel: m\n")
    assert yaml.safe_load(text)["mcpServers"] == {"new": {"command": "n"}}
    created = written(tmp_path / "fresh", None, "new", {"command": "n"})
    assert yaml.safe_load(created) == {"mcpServers": {"new": {"command": "n"}}}


def test_a_flow_style_section_gets_the_new_server_and_keeps_its_comment(tmp_path):
    text = written(tmp_path, "model: m  # c\nmcpServers: {a: {command: a}}\n", "b", {"command": "b"})
    assert yaml.safe_load(text) == {"model": "m", "mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}
    assert text.startswith("model: m  # c\n")


def test_references_are_written_as_given_never_expanded(tmp_path):
    text = written(tmp_path, FILE, "gamma", {"command": "c", "env": {"TOKEN": "${MY_TOKEN}"}})
    assert "${MY_TOKEN}" in text
