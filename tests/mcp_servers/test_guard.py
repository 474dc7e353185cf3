"""The shell's second line of defence (mcp_servers/shell/guard.py)."""

from __future__ import annotations

import pytest

from mcp_servers.shell import guard
from mcp_servers.shell.guard import check_command

DANGEROUS = [
    ("rm -rf /", "rm-root"),
    ("rm -rf /*", "rm-root"),
    ("rm -fr /", "rm-root"),
    ("rm -r -f /", "rm-root"),
    ("rm -Rf //", "rm-root"),
    ("rm -rf /.", "rm-root"),
    ("rm --recursive --force /", "rm-root"),
    ("rm --no-preserve-root -rf /", "rm-root"),
    ("rm -rf / --no-preserve-root", "rm-root"),
    ("sudo rm -rf /", "rm-root"),
    ("rm -rf ~", "rm-root"),
    ("rm -rf ~/", "rm-root"),
    ("rm -rf ~/*", "rm-root"),
    ("rm -rf $HOME", "rm-root"),
    ("rm -rf ${HOME}", "rm-root"),
    ("rm -rf /usr", "rm-root"),
    ("rm -r /etc/", "rm-root"),
    ("cd /tmp && rm -rf /", "rm-root"),
    ("true; rm -rf /*", "rm-root"),
    ("{ rm -rf /; }", "rm-root"),
    ("echo $(rm -rf /)", "rm-root"),
    ("find . -name x | xargs rm -rf /", "rm-root"),
    ("bash -c 'rm -rf /'", "rm-root"),
    ('sudo sh -c "rm -rf /*"', "rm-root"),
    ("mkfs.ext4 /dev/sda1", "format"),
    ("mkfs -t xfs /dev/sdb", "format"),
    ("sudo mkfs.vfat /dev/mmcblk0p1", "format"),
    ("dd if=/dev/zero of=/dev/sda bs=1M", "disk-write"),
    ("dd if=image.iso of=/dev/nvme0n1", "disk-write"),
    ("dd of=/dev/vda if=/dev/urandom", "disk-write"),
    ("echo hi > /dev/sda", "disk-write"),
    ("cat image >/dev/sdb1", "disk-write"),
    ("shutdown -h now", "power"),
    ("sudo reboot", "power"),
    ("/sbin/reboot", "power"),
    ("halt", "power"),
    ("poweroff", "power"),
    ("systemctl poweroff", "power"),
    ("sudo -u root shutdown now", "power"),
    ("init 0", "power"),
    (":(){ :|:& };:", "fork-bomb"),
    (":(){:|:&};:", "fork-bomb"),
    ("bomb(){ bomb|bomb& };bomb", "fork-bomb"),
    ("chmod -R 777 /", "recursive-permissions"),
    ("chmod 777 -R /", "recursive-permissions"),
    ("sudo chown -R nobody /", "recursive-permissions"),
]

SAFE = [
    "rm -rf build/",
    "rm -rf ./node_modules",
    "rm -rf /tmp/overseer-scratch",
    "rm -rf ~/project/build",
    "rm notes.txt",
    "ls -la /",
    "echo reboot",
    "grep -r halt src/",
    "dd if=input.bin of=output.bin",
    "echo done > /dev/null",
    "chmod -R 755 ./dist",
    "chmod 644 /tmp/file",
    "git status && git diff",
    "python -c 'print(1)'",
    "mkdir -p out && cd out",
]


@pytest.mark.parametrize(("command", "rule"), DANGEROUS)
def test_obviously_destructive_command_is_refused_under_its_rule(command: str, rule: str) -> None:
    refusal = check_command(command)
    assert refusal is not None
    assert refusal.rule == rule


@pytest.mark.parametrize("command", SAFE)
def test_ordinary_command_passes(command: str) -> None:
    assert check_command(command) is None


def test_module_says_the_approval_policy_is_the_security_boundary() -> None:
    assert guard.__doc__ is not None
    assert "approval policy" in guard.__doc__
    assert "NOT the security boundary" in guard.__doc__
