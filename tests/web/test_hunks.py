"""web/src/hunks.ts: a proposed file change cut into hunks, only the chosen ones applied, and an
edit_file call that makes exactly that file (issue 33, item 9)."""

from __future__ import annotations

import itertools
import random

from .ts_modules import call, run

FILE = "".join(f"line {n}\n" for n in range(1, 31))


def three_changes() -> str:
    """FILE with lines 3, 15 and 27 changed: three hunks (more than six kept lines between each)."""
    return FILE.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\n").replace("line 27\n", "")


def random_file(rng: random.Random) -> str:
    # Few distinct lines, so the same line occurs often; CRLF and a missing last newline included.
    lines = [rng.choice(["a\n", "b\n", "c\n", "a\r\n", "def f():\n", "    return 1\n"]) for _ in range(rng.randint(0, 40))]
    text = "".join(lines)
    if text and rng.random() < 0.3:
        text = text[:-1]
    return text


def random_pairs(count: int) -> list[tuple[str, str]]:
    rng = random.Random(33)
    pairs = []
    for _ in range(count):
        before = random_file(rng)
        # Mostly a few scattered changes (several hunks), sometimes a different file altogether.
        after = random_file(rng) if rng.random() < 0.2 else "".join(
            rng.choice(["", line + "z\n", "new\n" + line, "q"]) if rng.random() < 0.1 else line
            for line in before.splitlines(keepends=True)
        )
        pairs.append((before, after))
    return pairs


def test_every_hunk_gives_the_proposed_file_and_none_gives_the_file_on_disk():
    pairs = random_pairs(200)
    counts = run([("hunks", [before, after]) for before, after in pairs])
    calls = []
    for (before, after), hunks in zip(pairs, counts, strict=True):
        calls.append(("apply", [before, after, list(range(hunks["count"]))]))
        calls.append(("apply", [before, after, []]))
    answers = run(calls)
    for i, (before, after) in enumerate(pairs):
        assert answers[2 * i] == after, (before, after)
        assert answers[2 * i + 1] == before, (before, after)
    assert any(h["count"] >= 2 for h in counts)  # the cases do cover several hunks


def test_one_chosen_hunk_of_three_changes_only_its_lines():
    hunks = call("hunks", FILE, three_changes())
    assert hunks["count"] == 3
    assert call("apply", FILE, three_changes(), [1]) == FILE.replace("line 15\n", "line fifteen\n")
    assert call("apply", FILE, three_changes(), [0, 2]) == FILE.replace("line 3\n", "line three\n").replace("line 27\n", "")


def test_changes_whose_context_overlaps_are_one_hunk():
    close = FILE.replace("line 3\n", "x\n").replace("line 10\n", "y\n")  # six kept lines between
    apart = FILE.replace("line 3\n", "x\n").replace("line 11\n", "y\n")  # seven
    assert call("hunks", FILE, close)["count"] == 1
    assert call("hunks", FILE, apart)["count"] == 2


def test_a_line_ending_change_is_a_change_and_reads_as_one():
    hunks = call("hunks", "a\nb", "a\nb\n")
    assert hunks["count"] == 1
    shown = call("shown", "a\nb", "a\nb\n")
    assert [(line["kind"], line["text"], line.get("noEol", False)) for line in shown[1:]] == [
        ("same", "a", False),
        ("del", "b", True),
        ("add", "b", False),
    ]
    assert call("apply", "a\r\nb\n", "a\nb\n", [0]) == "a\nb\n"


def test_the_shown_diff_heads_each_hunk_with_its_index_and_folds_the_lines_between():
    shown = call("shown", FILE, three_changes())
    headers = [line for line in shown if line["kind"] == "hunk"]
    assert [(h["text"], h["hunk"]) for h in headers] == [
        ("@@ -1,6 +1,6 @@", 0),
        ("@@ -12,7 +12,7 @@", 1),
        ("@@ -24,7 +24,6 @@", 2),
    ]
    gaps = [line["text"] for line in shown if line["kind"] == "gap"]
    assert gaps == ["⋯ 5 unchanged lines", "⋯ 5 unchanged lines"]
    changed = [(line["kind"], line["text"], line["hunk"]) for line in shown if line["kind"] in ("add", "del")]
    assert changed == [
        ("del", "line 3", 0),
        ("add", "line three", 0),
        ("del", "line 15", 1),
        ("add", "line fifteen", 1),
        ("del", "line 27", 2),
    ]


def server_edit(text: str, old: str, new: str) -> str:
    """What the file server's edit_file does (mcp_servers/file/writing.py): exactly one occurrence."""
    assert old and old != new
    assert text.count(old) == 1
    return text.replace(old, new, 1)


def test_an_edit_between_two_texts_makes_the_second_through_the_file_servers_edit():
    rng = random.Random(9)
    pairs = [(b, a) for b, a in random_pairs(200) if b and b != a]
    pairs += [("aaa\n", "aa\n"), ("x\nx\nx\n", "x\ny\nx\n"), ("a\na\n", "a\na\na\n"), ("abc", "abd")]
    rng.shuffle(pairs)
    edits = run([("editBetween", [before, after]) for before, after in pairs])
    for (before, after), edit in zip(pairs, edits, strict=True):
        assert edit is not None, (before, after)
        assert server_edit(before, edit["old_text"], edit["new_text"]) == after, (before, after, edit)
        # The one occurrence is the one found first: no overlapping copy before it either.
        starts = [i for i in range(len(before)) if before.startswith(edit["old_text"], i)]
        assert len(starts) == 1, (before, edit)


def test_an_edit_is_whole_lines_around_the_change():
    edit = call("editBetween", FILE, FILE.replace("line 15\n", "line fifteen\n"))
    assert edit == {"old_text": "line 15\n", "new_text": "line fifteen\n"}
    # Lines, not characters: "line 2" is common to lines 27 and 28, yet only line 27 goes.
    assert call("editBetween", FILE, FILE.replace("line 27\n", "")) == {"old_text": "line 27\n", "new_text": ""}
    # "b\n" alone also ends "ab\n": widened a line each way (none follows) until it occurs once.
    edit = call("editBetween", "x\nab\nb\n", "x\nab\nc\n")
    assert edit == {"old_text": "ab\nb\n", "new_text": "ab\nc\n"}


def test_no_edit_for_no_change_or_an_empty_file():
    assert call("editBetween", FILE, FILE) is None
    assert call("editBetween", "", "new\n") is None


def test_chosen_hunks_of_a_write_are_sent_as_its_content():
    args = {"path": "notes.txt", "content": three_changes()}
    file = {"exists": True, "content": FILE}
    answer = call("chosenArguments", "write_file", args, file, [1])
    assert answer == {"count": 3, "args": {"path": "notes.txt", "content": FILE.replace("line 15\n", "line fifteen\n")}}
    assert call("chosenArguments", "write_file", args, file, [])["args"] is None  # nothing would change


def test_chosen_hunks_of_an_edit_stay_an_edit_that_makes_only_them():
    old = "".join(f"line {n}\n" for n in range(3, 28))
    new = old.replace("line 3\n", "line three\n").replace("line 15\n", "line fifteen\n").replace("line 27\n", "")
    args = {"path": "notes.txt", "old_text": old, "new_text": new}
    choices = [list(c) for c in itertools.chain.from_iterable(itertools.combinations(range(3), k) for k in (1, 2))]
    file = {"exists": True, "content": FILE}
    answers = run([("chosenArguments", ["edit_file", args, file, chosen]) for chosen in choices])
    expected = run([("apply", [FILE, server_edit(FILE, old, new), chosen]) for chosen in choices])
    for answer, result in zip(answers, expected, strict=True):
        assert answer["count"] == 3
        edited = answer["args"]
        assert set(edited) == {"path", "old_text", "new_text"} and edited["path"] == "notes.txt"
        assert server_edit(FILE, edited["old_text"], edited["new_text"]) == result


def test_no_review_where_the_change_cannot_be_cut():
    twice = {"exists": True, "content": "x\nx\n"}
    assert call("chosenArguments", "edit_file", {"path": "f", "old_text": "x\n", "new_text": "y\n"}, twice, [0]) is None
    unreadable = {"exists": True, "content": None}
    assert call("chosenArguments", "write_file", {"path": "f", "content": "y\n"}, unreadable, [0]) is None
    assert call("chosenArguments", "read_file", {"path": "f"}, {"exists": True, "content": "x\n"}, [0]) is None
