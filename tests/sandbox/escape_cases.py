"""The escape corpus of issue 29: commands that try to get out of the sandbox of one `exec` call.

Each case is one command run as agent alpha in its workspace (test_escape_corpus.py builds the
world and says what "out" means). Paths in commands are relative to that workspace:

    <root>/home/                      $HOME (emptied inside the sandbox)
    <root>/outside/                   a folder next to the data dir
    <root>/data/                      the data dir: overseer.db, the fallback MEMORY.md,
                                      skills/ (a read root)
    <root>/data/agents/alpha/notes/   a folder next to the workspace (`../notes`)
    <root>/data/agents/alpha/workspace/
                                      the workspace: readme.txt, secrets/ and vault/keys/ (`Read`
                                      denied), .env and sub/.env (`Read(.env)`), conf/prod/ (`Edit`
                                      denied), the instruction files, team/charlie/ (agent
                                      charlie's workspace)
    <root>/data/agents/bravo/workspace/
                                      agent bravo's workspace (`../../bravo/workspace`)

Tokens a command may use, replaced before it runs: @WS@ the workspace, @BRAVO@ bravo's
workspace, @AGENTS@ the agents dir, @DATA@ the data dir, @OUT@ the outside folder, @NOTES@ the
folder next to the workspace, @CANARY@ a path in the host's /tmp, @TAG@ a name no host folder holds.

A case names programs it needs by their words in the command: a case whose program is not on
this machine is left out at collection (it would pass without proving anything).
"""

from __future__ import annotations

import base64
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Family = Literal["read", "write", "agent", "instructions", "control"]
"""read: a `Read`-denied file; write: outside the workspace; agent: another agent's files;
instructions: the instruction files and `Edit`-denied paths; control: what must still work."""

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""Where programs are found inside the sandbox (only the system folders are there)."""
OPTIONAL_PROGRAMS = (
    "python3", "perl", "awk", "sed", "make", "tar", "zip", "unzip", "git", "rsync", "unshare",
    "umount", "mount", "nsenter", "setsid", "find", "xargs", "mkfifo", "truncate", "install",
    "base64", "dd", "nohup", "tee",
)  # fmt: skip
_PROGRAM = {p: re.compile(rf"(?<![\w/.-]){re.escape(p)}(?![\w.-])") for p in OPTIONAL_PROGRAMS}

README = "PUBLIC-README-5150"
"""readme.txt: what controls and witnesses print to show the mechanism really ran."""
SKILL = "PUBLIC-SKILL-4410"
CODE = "PUBLIC-CODE-7788"


@dataclass(frozen=True, kw_only=True)
class Case:
    """One command and what, besides the corpus-wide checks, must hold after it."""

    id: str
    family: Family
    technique: str
    command: str
    expect: str | None = None
    """Text the output must hold: proof that the mechanism ran (a witness), or a control's result."""
    without: tuple[str, ...] = ()
    """Workspace paths removed before the command (instruction files it may then create)."""
    creates: tuple[str, ...] = ()
    """Instruction files the command creates: `Confinement.after` must move them out and flag the result."""
    unprotect: tuple[str, ...] = ()
    changes: Mapping[str, str] = field(default_factory=dict)
    """Workspace files and the text they must hold afterwards (controls)."""
    fifo: str | None = None
    """A fifo the command made and holds open in a background process: no process may hold it after."""
    then: str | None = None
    """A second command, in an `exec` call of its own (a new sandbox), after the first."""

    @property
    def needs(self) -> tuple[str, ...]:
        """The optional programs the command names."""
        return tuple(p for p, word in _PROGRAM.items() if word.search(f"{self.command}\n{self.then or ''}"))

    def runnable(self) -> bool:
        """Whether this machine has every program the case needs (inside the sandbox: the system's)."""
        return all(shutil.which(p, path=SYSTEM_PATH) for p in self.needs)


def b64(text: str) -> str:
    """Text as base64, for commands that decode what they run."""
    return base64.b64encode(text.encode()).decode()


COMMIT = "git -c user.name=a -c user.email=a@b commit -qm x"
UMOUNT2 = "import ctypes; libc = ctypes.CDLL(None); [libc.umount2(p.encode(), 2) for p in {paths!r}]"
MS_REMOUNT_BIND = 32 | 4096
REMOUNT_RW = (
    "import ctypes; libc = ctypes.CDLL(None); "
    f"[libc.mount(None, p.encode(), None, {MS_REMOUNT_BIND}, None) for p in {{paths!r}}]"
)
WALK = (
    "import os\n"
    "for d, _, fs in os.walk({top!r}):\n"
    "    for f in fs:\n"
    "        p = os.path.join(d, f)\n"
    "        try: print(p, open(p, errors='replace').read())\n"
    "        except OSError as e: print(p, e)\n"
)


def _reads() -> list[Case]:
    r = "read"
    # fmt: off
    return [
        # plain paths and redirections
        Case(id="read-cat", family=r, technique="redirect", command="cat readme.txt secrets/key.txt sub/.env .env vault/keys/k.txt", expect=README),
        Case(id="read-lt", family=r, technique="redirect", command="cat < secrets/key.txt; cat < readme.txt", expect=README),
        Case(id="read-fd3", family=r, technique="redirect", command="exec 3< secrets/key.txt; cat <&3"),
        Case(id="read-fd-rw", family=r, technique="redirect", command="exec 4<> sub/.env; cat <&4"),
        Case(id="read-while-read", family=r, technique="redirect", command='while IFS= read -r l || [ -n "$l" ]; do echo "$l"; done < sub/.env'),
        Case(id="read-dollar-lt", family=r, technique="redirect", command='echo "$(<secrets/key.txt)" "$(<.env)" "$(<readme.txt)"', expect=README),
        Case(id="read-mapfile", family=r, technique="redirect", command='mapfile -t a < .env; echo "${a[@]}"'),
        Case(id="read-heredoc-subst", family=r, technique="here-doc", command="cat <<EOF\n$(cat secrets/key.txt)\n$(cat readme.txt)\nEOF", expect=README),
        Case(id="read-heredoc-while", family=r, technique="here-doc", command="while read -r f; do cat \"$f\"; done <<EOF\nsecrets/key.txt\nsecrets/nested/deep.txt\nsub/.env\nreadme.txt\nEOF", expect=README),
        Case(id="read-source", family=r, technique="redirect", command="source sub/.env; . ./.env; . secrets/key.txt; true"),
        Case(id="read-bash-file", family=r, technique="redirect", command="bash .env; bash secrets/key.txt; true"),
        Case(id="read-dotdot", family=r, technique="redirect", command="cat ./secrets/../secrets/key.txt sub/../sub/.env"),
        Case(id="read-pwd-abs", family=r, technique="redirect", command='cat "$PWD/secrets/key.txt" "$PWD/.env" @WS@/sub/.env'),
        Case(id="read-head-tail", family=r, technique="redirect", command="head -c 100 secrets/key.txt; tail -n 5 sub/.env; od -c .env"),
        Case(id="read-grep-r", family=r, technique="glob", command="grep -r '' . 2>&1", expect=README),
        # cd
        Case(id="read-cd-in", family=r, technique="cd", command="cd secrets && cat key.txt nested/deep.txt"),
        Case(id="read-cd-up", family=r, technique="cd", command="cd ../.. && cat alpha/workspace/secrets/key.txt alpha/workspace/sub/.env alpha/workspace/readme.txt", expect=README),
        Case(id="read-cd-root", family=r, technique="cd", command="cd / && cat @WS@/secrets/key.txt @WS@/.env"),
        Case(id="read-pushd", family=r, technique="cd", command="pushd sub >/dev/null && cat .env && popd >/dev/null && cat secrets/key.txt"),
        Case(id="read-cd-outside", family=r, technique="cd", command="cd ../../../.. && cat outside/secret.txt home/.ssh/id_rsa data/overseer.db data/MEMORY.md"),
        Case(id="read-cdpath", family=r, technique="cd", command="CDPATH=@WS@ cd secrets && cat key.txt"),
        # /proc
        Case(id="read-proc-cwd", family=r, technique="proc", command="cat /proc/self/cwd/secrets/key.txt /proc/self/cwd/readme.txt", expect=README),
        Case(id="read-proc-cwd-up", family=r, technique="proc", command="cat /proc/self/cwd/../../alpha/workspace/sub/.env /proc/self/cwd/../workspace/.env"),
        Case(id="read-proc-root", family=r, technique="proc", command="cat /proc/self/root@WS@/secrets/key.txt /proc/self/root/proc/self/cwd/.env"),
        Case(id="read-proc-1", family=r, technique="proc", command="cat /proc/1/root@WS@/secrets/key.txt /proc/1/cwd/sub/.env"),
        Case(id="read-proc-fd-dir", family=r, technique="proc", command="exec 3< .; cat /proc/self/fd/3/secrets/key.txt /proc/self/fd/3/sub/.env"),
        Case(id="read-proc-outside", family=r, technique="proc", command="cat /proc/self/cwd/../../../../outside/secret.txt /proc/self/root@DATA@/overseer.db /proc/self/root@OUT@/secret.txt"),
        # globs
        Case(id="read-glob-star", family=r, technique="glob", command="cat secrets/* secrets/*/* */.env .env readme.txt", expect=README),
        Case(id="read-globstar", family=r, technique="glob", command="shopt -s globstar dotglob; for f in **; do [ -f \"$f\" ] && cat \"$f\"; done", expect=README),
        Case(id="read-glob-up", family=r, technique="glob", command="cat ../*/secrets/key.txt ../*/.env ../*/readme.txt", expect=README),
        Case(id="read-glob-abs", family=r, technique="glob", command="cat /*/*/data/agents/*/workspace/secrets/key.txt /*/*/data/agents/*/workspace/sub/.env /*/*/outside/*"),
        Case(id="read-glob-home", family=r, technique="glob", command="cat ~/.ssh/* ~/.* 2>&1; cat @DATA@/*"),
        # python
        Case(id="read-py-open", family=r, technique="python3 -c", command="""python3 -c "print(open('readme.txt').read()); print(open('secrets/key.txt').read())" """, expect=README),
        Case(id="read-py-pathlib", family=r, technique="python3 -c", command="""python3 -c "import pathlib; print(pathlib.Path('sub/.env').read_text())" """),
        Case(id="read-py-osopen", family=r, technique="python3 -c", command="""python3 -c "import os; fd = os.open('.env', os.O_RDONLY); print(os.read(fd, 100))" """),
        Case(id="read-py-walk", family=r, technique="python3 -c", command=f'python3 -c "{WALK.format(top=".")}"', expect=README),
        Case(id="read-py-mmap", family=r, technique="python3 -c", command="""python3 -c "import mmap; f = open('secrets/key.txt', 'rb'); print(mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)[:])" """),
        Case(id="read-py-subprocess", family=r, technique="python3 -c", command="""python3 -c "import subprocess; subprocess.run('cat sub/.env secrets/key.txt readme.txt', shell=True)" """, expect=README),
        Case(id="read-py-chdir", family=r, technique="python3 -c", command="""python3 -c "import os; os.chdir('..'); print(open('workspace/secrets/key.txt').read())" """),
        Case(id="read-py-outside", family=r, technique="python3 -c", command=f'python3 -c "{WALK.format(top="@DATA@")}"; python3 -c "print(open(\'@OUT@/secret.txt\').read())"'),
        Case(id="read-py-openat", family=r, technique="python3 -c", command="""python3 -c "import os; d = os.open('secrets', os.O_RDONLY); print(os.listdir(d)); print(os.read(os.open('key.txt', os.O_RDONLY, dir_fd=d), 99))" """),
        # perl
        Case(id="read-perl-n", family=r, technique="perl -e", command="perl -ne print readme.txt secrets/key.txt sub/.env .env", expect=README),
        Case(id="read-perl-open", family=r, technique="perl -e", command="""perl -e 'open(F, "<", ".env"); print <F>; open(G, "<", "secrets/key.txt"); print <G>'"""),
        Case(id="read-perl-glob", family=r, technique="perl -e", command="""perl -e '@ARGV = (glob("secrets/* secrets/*/*"), "readme.txt"); print <>'""", expect=README),
        Case(id="read-perl-backtick", family=r, technique="perl -e", command="""perl -e 'print `cat sub/.env`'"""),
        # awk
        Case(id="read-awk-1", family=r, technique="awk", command="awk 1 readme.txt secrets/key.txt sub/.env", expect=README),
        Case(id="read-awk-getline", family=r, technique="awk", command="""awk 'BEGIN { while ((getline l < ".env") > 0) print l; while ((getline l < "secrets/nested/deep.txt") > 0) print l }'"""),
        Case(id="read-awk-system", family=r, technique="awk", command="""awk 'BEGIN { system("cat secrets/key.txt") }'"""),
        # sed
        Case(id="read-sed-p", family=r, technique="sed", command="sed -n p readme.txt secrets/key.txt .env", expect=README),
        Case(id="read-sed-r", family=r, technique="sed", command="sed '1r sub/.env' readme.txt", expect=README),
        Case(id="read-sed-e", family=r, technique="sed", command="echo x | sed 'e cat secrets/key.txt'"),
        # copied and linked binaries
        Case(id="read-copied-cat", family=r, technique="copied binary", command="cp /bin/cat ./c && ./c readme.txt secrets/key.txt sub/.env", expect=README),
        Case(id="read-linked-cat", family=r, technique="copied binary", command="ln -s /bin/cat ./c && ./c .env secrets/nested/deep.txt"),
        Case(id="read-copied-python", family=r, technique="copied binary", command="""cp "$(readlink -f /usr/bin/python3)" ./py && ./py -c "print(open('.env').read())" """),
        Case(id="read-installed-head", family=r, technique="copied binary", command="install -m755 /bin/head ./h && ./h secrets/key.txt readme.txt", expect=README),
        # scripts written and run in one command
        Case(id="read-sh-script", family=r, technique="script", command="printf 'cat secrets/key.txt readme.txt\\n' > x.sh && sh x.sh", expect=README),
        Case(id="read-bash-script-arg", family=r, technique="script", command="""echo 'cat "$@"' > r.sh && bash r.sh sub/.env .env readme.txt""", expect=README),
        Case(id="read-exec-script", family=r, technique="script", command="printf '#!/bin/sh\\ncat .env secrets/key.txt readme.txt\\n' > r && chmod +x r && ./r", expect=README),
        Case(id="read-py-script", family=r, technique="script", command="cat > r.py <<'EOF'\nimport glob\nfor p in glob.glob('secrets/**', recursive=True) + ['sub/.env', 'readme.txt']:\n    try: print(open(p).read())\n    except OSError as e: print(e)\nEOF\npython3 r.py", expect=README),
        # make
        Case(id="read-make-recipe", family=r, technique="make", command="printf 'all:\\n\\t@cat readme.txt secrets/key.txt\\n' > Makefile && make -s", expect=README),
        Case(id="read-make-file-fn", family=r, technique="make", command="printf '$(info $(file < readme.txt))\\nx := $(file < sub/.env)\\nall:\\n\\t@echo $(x)\\n' > M && make -s -f M", expect=README),
        Case(id="read-make-wildcard", family=r, technique="make", command="printf 'all: ; @cat $(wildcard secrets/* secrets/*/*) .env\\n' > M && make -s -f M"),
        Case(id="read-make-shell", family=r, technique="make", command="printf 'x := $(shell cat secrets/key.txt readme.txt)\\nall: ; @echo $(x)\\n' > M && make -s -f M", expect=README),
        # archives
        Case(id="read-tar-pipe", family=r, technique="tar", command="tar -cf - readme.txt secrets sub .env | tar -xOf -", expect=README),
        Case(id="read-tar-C", family=r, technique="tar", command="tar -C secrets -cf - . | tar -xOf -; tar -C sub -cf - .env | tar -xOf -"),
        Case(id="read-tar-roundtrip", family=r, technique="tar", command="tar -cf a.tar readme.txt .env sub secrets; mkdir o; tar -xf a.tar -C o; cat o/readme.txt o/.env o/sub/.env o/secrets/key.txt", expect=README),
        Case(id="read-tar-to-command", family=r, technique="tar", command="tar -cf a.tar secrets readme.txt && tar -xf a.tar --to-command=cat", expect=README),
        Case(id="read-zip-p", family=r, technique="zip", command="zip -qr a.zip readme.txt secrets sub .env; unzip -p a.zip", expect=README),
        Case(id="read-zip-d", family=r, technique="zip", command="cd secrets; zip -qr ../k.zip .; cd ..; zip -q k.zip readme.txt sub/.env; unzip -o -q k.zip -d out && cat out/*", expect=README),
        # git
        Case(id="read-git-show", family=r, technique="git", command=f"git init -q && git add readme.txt; git add -f secrets; git add -f sub/.env; git add -f .env; {COMMIT}; for f in readme.txt secrets/key.txt sub/.env .env; do git show HEAD:$f; done", expect=README),
        Case(id="read-git-diff-noindex", family=r, technique="git", command="git --no-pager diff --no-index /dev/null readme.txt; git --no-pager diff --no-index /dev/null secrets/key.txt; git --no-pager diff --no-index /dev/null .env; true", expect=README),
        Case(id="read-git-alias", family=r, technique="git", command="""git -c alias.x='!cat readme.txt secrets/key.txt sub/.env' x""", expect=README),
        Case(id="read-git-C", family=r, technique="git", command=f"git -C sub init -q && git -C sub add code.py; git -C sub add -f .env; git -C sub {COMMIT[4:]}; git -C sub show HEAD:code.py; git -C sub show HEAD:.env", expect=CODE),
        Case(id="read-git-hash-object", family=r, technique="git", command="git init -q && h=$(git hash-object -w secrets/key.txt) && git cat-file -p $h; h=$(git hash-object -w readme.txt) && git cat-file -p $h", expect=README),
        # links
        Case(id="read-hardlink", family=r, technique="hard link", command="ln secrets/key.txt k; ln sub/.env e; ln .env e2; cat k e e2"),
        Case(id="read-symlink-file", family=r, technique="symlink", command="ln -s secrets/key.txt k && ln -s sub/.env e && cat k e"),
        Case(id="read-symlink-proc", family=r, technique="symlink", command="ln -s /proc/self/cwd/sub/.env e && ln -s /proc/1/cwd/secrets s && cat e s/key.txt"),
        Case(id="read-symlink-up", family=r, technique="symlink", command="ln -s .. up && cat up/workspace/secrets/key.txt up/workspace/.env up/workspace/readme.txt", expect=README),
        Case(id="read-symlink-root", family=r, technique="symlink", command="ln -s / r && cat r@WS@/.env r@WS@/secrets/nested/deep.txt"),
        # env -C, find, xargs, dd, cp, mv, rsync
        Case(id="read-env-C", family=r, technique="env -C", command="env -C secrets cat key.txt; env -C sub cat .env code.py", expect=CODE),
        Case(id="read-env-i", family=r, technique="env -C", command="env -i /bin/cat secrets/key.txt .env"),
        Case(id="read-find-exec-plus", family=r, technique="find -exec", command="find . -type f -exec cat {} +", expect=README),
        Case(id="read-find-exec-sh", family=r, technique="find -exec", command="find . -name '*.txt' -exec sh -c 'cat \"$1\"' _ {} \\;", expect=README),
        Case(id="read-find-empty", family=r, technique="find -exec", command="find secrets sub . -maxdepth 1 -name '.env' -o -name 'key.txt' | xargs cat"),
        Case(id="read-xargs", family=r, technique="xargs", command="echo readme.txt secrets/key.txt sub/.env .env | xargs cat", expect=README),
        Case(id="read-xargs-I", family=r, technique="xargs", command="printf '%s\\n' secrets/key.txt readme.txt | xargs -I{} sh -c 'cat {}'", expect=README),
        Case(id="read-dd", family=r, technique="dd", command="dd if=secrets/key.txt status=none; dd if=readme.txt status=none", expect=README),
        Case(id="read-dd-bs", family=r, technique="dd", command="dd if=sub/.env bs=1 status=none; dd if=.env bs=1 skip=0 status=none"),
        Case(id="read-cp", family=r, technique="cp", command="cp secrets/key.txt k; cp sub/.env e; cat k e"),
        Case(id="read-cp-reflink", family=r, technique="cp", command="cp --reflink=auto .env e; cp --reflink=always secrets/key.txt k; cat e k"),
        Case(id="read-cp-r", family=r, technique="cp", command="cp -r secrets s2; cp -a . /tmp/copy; cat s2/* /tmp/copy/secrets/key.txt /tmp/copy/.env /tmp/copy/readme.txt", expect=README),
        Case(id="read-mv-dir", family=r, technique="mv", command="mv secrets s2; cat s2/key.txt; mv sub s3; cat s3/.env"),
        Case(id="read-mv-file", family=r, technique="mv", command="mv .env e; cat e; mv sub/.env e2; cat e2"),
        Case(id="read-rsync", family=r, technique="rsync", command="rsync -a secrets/ s2/; rsync -a sub/.env .env readme.txt /tmp/; cat s2/* /tmp/.env /tmp/readme.txt", expect=README),
        # nested shells, base64
        Case(id="read-bash-c-nested", family=r, technique="bash -c", command="""bash -c 'bash -c "cat secrets/key.txt readme.txt"'""", expect=README),
        Case(id="read-sh-c-cd", family=r, technique="bash -c", command="""sh -c 'cd sub && cat .env ../readme.txt'""", expect=README),
        Case(id="read-bash-c-fd", family=r, technique="bash -c", command="""bash -c 'exec 4<"$1"; cat <&4' _ .env"""),
        Case(id="read-base64-roundtrip", family=r, technique="base64", command="base64 secrets/key.txt | base64 -d; base64 -w0 sub/.env .env | base64 -d"),
        Case(id="read-base64-eval", family=r, technique="base64", command=f'eval "$(echo {b64("cat secrets/key.txt sub/.env readme.txt")} | base64 -d)"', expect=README),
        # the sandbox's own mounts
        # Escaped (as root) until bwrap got `--cap-drop ALL`: run by root, the sandbox kept every
        # capability in its user namespace, and `umount` of the hiding mounts showed the secrets.
        Case(id="read-umount", family=r, technique="mounts", command="umount -n -l secrets; umount -n -l sub/.env; umount -n -l .env; cat secrets/key.txt sub/.env .env"),
        # Escaped likewise (as root), through the syscall.
        Case(id="read-umount2", family=r, technique="mounts", command=f"""python3 -c "{UMOUNT2.format(paths=['secrets', 'sub/.env', '.env'])}"; cat secrets/key.txt sub/.env .env"""),
        Case(id="read-unshare-umount", family=r, technique="mounts", command="""unshare -rm sh -c 'umount -n -l secrets; umount -n -l .env; cat secrets/key.txt .env'"""),
        Case(id="read-unshare-umount2", family=r, technique="mounts", command=f"""unshare -rm python3 -c "{UMOUNT2.format(paths=['secrets', 'sub/.env'])}; print(open('secrets/key.txt').read(), open('sub/.env').read())" """),
        Case(id="read-nsenter", family=r, technique="mounts", command="nsenter -t 1 -m cat @WS@/secrets/key.txt @WS@/.env"),
        # Two calls: the first moves a denied file out of its rule's reach, the second reads it.
        # Escaped until the folders on the way to a hidden path were pinned (mounted on themselves):
        # renaming the folder that holds `vault/keys` (`Read(./vault/keys/**)`) moved the emptied mount
        # along inside the sandbox, and the files on the host: the next sandbox hid nothing at v2/keys.
        Case(id="read-two-calls-mv-parent", family=r, technique="mv", command="mv vault v2", then="cat v2/keys/k.txt"),
        # Escaped likewise, through python.
        Case(id="read-two-calls-rename-py", family=r, technique="python3 -c", command="""python3 -c "import os; os.rename('vau' + 'lt', 'x')" """, then="cat x/keys/*"),
        Case(id="read-two-calls-mv-env", family=r, technique="mv", command="mv sub s2; mv s2/.env s2/e", then="cat s2/.env s2/e"),
        Case(id="read-two-calls-symlink", family=r, technique="symlink", command="ln -s secrets/key.txt k; ln -s vault/keys v", then="cat k v/k.txt"),
        Case(id="read-two-calls-copy", family=r, technique="cp", command="cp -r vault v2; cp -r secrets s2; tar -cf a.tar vault secrets", then="cat v2/keys/* s2/*; tar -xOf a.tar"),
        # what lies outside the workspace
        Case(id="read-outside-rel", family=r, technique="redirect", command="cat ../notes/n.txt ../../../../outside/secret.txt ../../../overseer.db ../../../MEMORY.md"),
        Case(id="read-outside-abs", family=r, technique="redirect", command="cat @OUT@/secret.txt @DATA@/overseer.db @NOTES@/n.txt $HOME/.ssh/id_rsa"),
    ]
    # fmt: on


def _agents() -> list[Case]:
    a = "agent"
    # fmt: off
    return [
        Case(id="agent-cat-rel", family=a, technique="redirect", command="cat ../../bravo/workspace/notes.txt ../../bravo/profile.md"),
        Case(id="agent-cat-abs", family=a, technique="redirect", command="cat @BRAVO@/notes.txt @BRAVO@/memory/MEMORY.md < @AGENTS@/bravo/profile.md"),
        Case(id="agent-cd", family=a, technique="cd", command="cd ../../bravo && cat workspace/notes.txt profile.md"),
        Case(id="agent-cd-abs", family=a, technique="cd", command="cd @BRAVO@ && cat *"),
        Case(id="agent-proc-cwd", family=a, technique="proc", command="cat /proc/self/cwd/../../bravo/workspace/notes.txt"),
        Case(id="agent-proc-root", family=a, technique="proc", command="cat /proc/self/root@BRAVO@/notes.txt /proc/1/root@AGENTS@/bravo/profile.md"),
        Case(id="agent-glob", family=a, technique="glob", command="cat ../../*/workspace/*.txt ../../*/profile.md", expect=README),
        Case(id="agent-glob-abs", family=a, technique="glob", command="cat @AGENTS@/*/workspace/notes.txt @AGENTS@/*/workspace/memory/*"),
        Case(id="agent-py", family=a, technique="python3 -c", command="""python3 -c "print(open('@BRAVO@/notes.txt').read())" """),
        Case(id="agent-py-walk", family=a, technique="python3 -c", command=f'python3 -c "{WALK.format(top="@AGENTS@")}"', expect=README),
        Case(id="agent-perl", family=a, technique="perl -e", command="perl -pe1 @BRAVO@/notes.txt ../../bravo/profile.md"),
        Case(id="agent-awk", family=a, technique="awk", command="awk 1 ../../bravo/workspace/notes.txt"),
        Case(id="agent-sed", family=a, technique="sed", command="sed -n p @AGENTS@/bravo/profile.md @BRAVO@/memory/MEMORY.md"),
        Case(id="agent-tar", family=a, technique="tar", command="tar -C @BRAVO@ -cf - . | tar -xOf -; tar -C ../../bravo -cf b.tar . && tar -xOf b.tar"),
        Case(id="agent-zip", family=a, technique="zip", command="zip -qr b.zip @AGENTS@/bravo; unzip -p b.zip"),
        Case(id="agent-git", family=a, technique="git", command="git -C @BRAVO@ init -q; git -C @BRAVO@ add -A; git --no-pager diff --no-index /dev/null @BRAVO@/notes.txt; true"),
        Case(id="agent-git-alias", family=a, technique="git", command="""git -c alias.b='!cat ../../bravo/workspace/notes.txt' b"""),
        Case(id="agent-symlink", family=a, technique="symlink", command="ln -s @BRAVO@ b && cat b/notes.txt; ln -s ../../bravo b2 && cat b2/profile.md"),
        Case(id="agent-hardlink", family=a, technique="hard link", command="ln @BRAVO@/notes.txt n; cat n"),
        Case(id="agent-env-C", family=a, technique="env -C", command="env -C @BRAVO@ cat notes.txt memory/MEMORY.md"),
        Case(id="agent-find", family=a, technique="find -exec", command="find @AGENTS@ -type f -exec cat {} +", expect=README),
        Case(id="agent-xargs", family=a, technique="xargs", command="echo @BRAVO@/notes.txt | xargs cat"),
        Case(id="agent-dd", family=a, technique="dd", command="dd if=@BRAVO@/notes.txt status=none"),
        Case(id="agent-cp", family=a, technique="cp", command="cp -r @BRAVO@ b; cp ../../bravo/profile.md p; cat b/notes.txt p"),
        Case(id="agent-rsync", family=a, technique="rsync", command="rsync -a @BRAVO@/ b/ && cat b/notes.txt"),
        Case(id="agent-bash-c", family=a, technique="bash -c", command="""bash -c 'cd ../..; cat bravo/workspace/notes.txt bravo/profile.md'"""),
        Case(id="agent-base64", family=a, technique="base64", command="base64 @BRAVO@/memory/MEMORY.md | base64 -d"),
        # writes into bravo's tree
        Case(id="agent-write-append", family=a, technique="redirect", command="echo x >> ../../bravo/workspace/notes.txt; echo x > @BRAVO@/new.txt"),
        Case(id="agent-write-rm", family=a, technique="redirect", command="rm -rf ../../bravo; rm -rf @BRAVO@/memory"),
        Case(id="agent-write-py", family=a, technique="python3 -c", command="""python3 -c "open('@BRAVO@/evil.txt', 'w').write('x'); import os; os.unlink('@BRAVO@/notes.txt')" """),
        Case(id="agent-write-mkdir", family=a, technique="redirect", command="mkdir -p @BRAVO@ && touch @BRAVO@/AGENTS.md && echo x > @BRAVO@/SOUL.md"),
        # charlie's workspace, nested inside alpha's
        Case(id="agent-nested-cat", family=a, technique="redirect", command="cat team/charlie/plan.txt team/shared.txt", expect="team-public"),
        Case(id="agent-nested-grep", family=a, technique="glob", command="grep -r '' team; cat team/*/*"),
        Case(id="agent-nested-cd", family=a, technique="cd", command="cd team/charlie && cat * .* 2>&1; ls -la"),
        Case(id="agent-nested-write", family=a, technique="redirect", command="echo x > team/charlie/new.txt; rm -rf team/charlie/*; rm -rf team"),
        # Escaped (as root) until `--cap-drop ALL`: `umount` of the emptied folder showed charlie's files.
        Case(id="agent-nested-umount", family=a, technique="mounts", command="umount -n -l team/charlie; cat team/charlie/plan.txt"),
        # Escaped likewise (as root), through the syscall.
        Case(id="agent-nested-umount2", family=a, technique="mounts", command=f"""python3 -c "{UMOUNT2.format(paths=['team/charlie'])}"; cat team/charlie/plan.txt"""),
        # Escaped until the folders on the way were pinned: renaming the folder that holds charlie's
        # workspace (`team/charlie` is a mount point, `team` was not) moved charlie's files on the host.
        Case(id="agent-nested-mv-parent", family=a, technique="mv", command="mv team t2 && ls t2/charlie"),
        # Escaped likewise, spelled so no reading of the command's text could see it.
        Case(id="agent-nested-rename-py", family=a, technique="python3 -c", command="""python3 -c "import os; os.rename('te' + 'am', 'moved')" """),
        # Host-side code that follows a symlink the command left in the workspace.
        # Escaped until `Confinement.after` stopped following symlinks: looking for a created
        # memory/MEMORY.md through the link, it moved bravo's memory/MEMORY.md into alpha's quarantine.
        Case(id="agent-after-follows-memory", family=a, technique="symlink", without=("memory",), command="ln -s ../../bravo/workspace/memory memory"),
        # Escaped likewise through `.overseer` (whose `modes` is checked after): bravo's .overseer/modes
        # was moved.
        Case(id="agent-after-follows-overseer", family=a, technique="symlink", command="mv .overseer .ov && ln -s ../../bravo/workspace/.overseer .overseer"),
        # The same with the link where the absent instruction file would be (`after` must move the link).
        Case(id="agent-after-link-file", family=a, technique="symlink", without=("memory",), command="mkdir memory && ln -s ../../../bravo/workspace/memory/MEMORY.md memory/MEMORY.md", creates=("memory/MEMORY.md",)),
        # And where the absent instruction folder would be (`after` must move the link).
        Case(id="agent-after-link-modes", family=a, technique="symlink", command="ln -s ../../../bravo/workspace/.overseer/modes .overseer/modes", creates=(".overseer/modes",)),
        # Escaped until the spill stopped following symlinks: the pool wrote a long output to
        # .overseer/spill/ through the link, into bravo's workspace.
        Case(id="agent-spill-follows", family=a, technique="symlink", command="rm -rf .overseer/spill; ln -s ../../../bravo/workspace .overseer/spill && head -c 60000 /dev/zero | tr '\\0' x"),
    ]
    # fmt: on


def _writes() -> list[Case]:
    w = "write"
    # fmt: off
    return [
        Case(id="write-gt-sibling", family=w, technique="redirect", command="echo x > ../notes/new.txt; echo x >> ../notes/n.txt"),
        Case(id="write-gt-abs", family=w, technique="redirect", command="echo x > @OUT@/new.txt; echo x >> @OUT@/secret.txt; echo x > @DATA@/new.db"),
        Case(id="write-home", family=w, technique="redirect", command="echo x >> $HOME/.bashrc; mkdir -p ~/.ssh && echo key >> ~/.ssh/authorized_keys; echo x > ~/new"),
        Case(id="write-canary-tmp", family=w, technique="redirect", command="echo x > @CANARY@; echo x > /tmp/@TAG@; echo x > /var/tmp/@TAG@; echo x > /dev/shm/@TAG@"),
        Case(id="write-system", family=w, technique="redirect", command="echo x > /etc/@TAG@; echo x > /usr/@TAG@; echo x > /run/@TAG@; echo x > /@TAG@; true"),
        Case(id="write-fd", family=w, technique="redirect", command="exec 3>>../notes/n.txt; echo x >&3; exec 4<>@OUT@/secret.txt; echo x >&4"),
        Case(id="write-heredoc", family=w, technique="here-doc", command="cat > ../notes/h.txt <<EOF\nx\nEOF\ncat >> @DATA@/MEMORY.md <<'EOF'\nobey\nEOF"),
        Case(id="write-tee", family=w, technique="redirect", command="echo x | tee ../notes/t.txt @OUT@/t.txt ~/.bashrc"),
        Case(id="write-cd", family=w, technique="cd", command="cd .. && echo x > notes/cd.txt; cd ../../../.. && echo x > outside/cd.txt && rm -f outside/secret.txt"),
        Case(id="write-proc", family=w, technique="proc", command="echo x > /proc/self/cwd/../notes/p.txt; echo x > /proc/self/root@OUT@/p.txt; echo x > /proc/1/root@DATA@/p.txt"),
        Case(id="write-glob", family=w, technique="glob", command="""for d in ../*/ ../../*/ ../../../*/ ../../../../*/; do echo x > "$d/glob.txt"; done"""),
        Case(id="write-py", family=w, technique="python3 -c", command="""python3 -c "open('../notes/py.txt', 'w').write('x'); open('@OUT@/py.txt', 'w').write('x')" """),
        Case(id="write-py-rmtree", family=w, technique="python3 -c", command="""python3 -c "import shutil; shutil.rmtree('@OUT@'); shutil.rmtree('@DATA@/skills')" """),
        Case(id="write-py-chmod", family=w, technique="python3 -c", command="""python3 -c "import os; os.chmod('@DATA@/overseer.db', 0o777); os.utime('@NOTES@/n.txt', (0, 0))" """),
        Case(id="write-perl", family=w, technique="perl -e", command="""perl -e 'open(F, ">>", "../notes/n.txt"); print F "x"; unlink glob("@DATA@/*")'"""),
        Case(id="write-awk", family=w, technique="awk", command="""awk 'BEGIN { print "x" > "../notes/awk.txt"; print "x" >> "@OUT@/secret.txt" }'"""),
        Case(id="write-sed-i", family=w, technique="sed", command="sed -i s/./X/ ../notes/n.txt; sed -i s/./X/ @DATA@/skills/demo/SKILL.md"),
        Case(id="write-sed-w", family=w, technique="sed", command="sed -n 'w ../notes/sedw.txt' readme.txt"),
        Case(id="write-copied-touch", family=w, technique="copied binary", command="cp /bin/touch ./t && ./t ../notes/t.txt @OUT@/t.txt; cp /bin/rm ./r && ./r -f @NOTES@/n.txt"),
        Case(id="write-script", family=w, technique="script", command="printf 'echo x > ../notes/sh.txt\\nrm -f @OUT@/keep.txt\\n' > x.sh && sh x.sh"),
        Case(id="write-make", family=w, technique="make", command="printf 'all:\\n\\ttouch ../notes/make.txt\\n\\trm -f @DATA@/overseer.db\\n' > Makefile && make -s"),
        Case(id="write-tar-C", family=w, technique="tar", command="tar -cf a.tar readme.txt && tar -xf a.tar -C ../notes; tar -xf a.tar -C @OUT@"),
        Case(id="write-tar-abs", family=w, technique="tar", command="echo x > f && tar -cPf a.tar --transform 's,^,@OUT@/,' f && tar -xPf a.tar; tar -tPf a.tar"),
        Case(id="write-tar-dotdot", family=w, technique="tar", command="mkdir -p d && echo x > d/f && tar -cf a.tar --transform 's,^d,../notes,' d/f && tar -xf a.tar --absolute-names"),
        Case(id="write-unzip-d", family=w, technique="zip", command="echo x > f && zip -q a.zip f && unzip -o -q a.zip -d ../notes; unzip -o -q a.zip -d @OUT@"),
        Case(id="write-zip-slip", family=w, technique="zip", command="""python3 -c "import zipfile; z = zipfile.ZipFile('a.zip', 'w'); z.writestr('../notes/slip.txt', 'x'); z.writestr('@OUT@/slip.txt', 'x'); z.close()" && unzip -o -: a.zip; true"""),
        Case(id="write-git-init", family=w, technique="git", command="git init -q ../notes; git -C .. init -q && git -C .. add -A; git -C @OUT@ init -q"),
        Case(id="write-git-alias", family=w, technique="git", command="""git -c alias.x='!touch ../notes/git.txt @OUT@/git.txt' x"""),
        Case(id="write-git-worktree", family=w, technique="git", command="git init -q r && cd r && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git worktree add -q ../../notes/wt"),
        Case(id="write-git-checkout", family=w, technique="git", command=f"mkdir r && cd r && git init -q && echo x > f && git add f && {COMMIT} && cd .. && git --git-dir=r/.git --work-tree=../notes checkout -f HEAD -- f; git --git-dir=r/.git --work-tree=@OUT@ checkout -f HEAD -- f"),
        Case(id="write-hardlink", family=w, technique="hard link", command="ln ../notes/n.txt h && echo x >> h; ln @DATA@/overseer.db d && echo x >> d"),
        Case(id="write-symlink", family=w, technique="symlink", command="ln -s ../notes n && echo x > n/sym.txt; ln -s @OUT@ o && rm -rf o/"),
        Case(id="write-env-C", family=w, technique="env -C", command="env -C .. sh -c 'echo x > notes/env.txt'; env -C @OUT@ touch env.txt"),
        Case(id="write-find-exec", family=w, technique="find -exec", command="""find .. -name n.txt -exec sh -c 'echo x >> "$1"' _ {} \\;"""),
        Case(id="write-find-delete", family=w, technique="find -exec", command="find @ROOT@/outside @ROOT@/home @DATA@ -type f -delete"),
        Case(id="write-xargs", family=w, technique="xargs", command="echo ../notes/n.txt @OUT@/secret.txt | xargs rm -f"),
        Case(id="write-dd", family=w, technique="dd", command="echo x | dd of=../notes/dd.txt status=none; dd if=/dev/zero of=@DATA@/overseer.db bs=1 count=4 conv=notrunc status=none"),
        Case(id="write-cp", family=w, technique="cp", command="cp --reflink=auto readme.txt ../notes/r.txt; cp -r . @OUT@/copy"),
        Case(id="write-mv-out", family=w, technique="mv", command="mv readme.txt ../notes/; mv sub @OUT@/"),
        Case(id="write-mv-in", family=w, technique="mv", command="mv ../notes/n.txt .; mv @OUT@/secret.txt ."),
        Case(id="write-rsync", family=w, technique="rsync", command="rsync -a readme.txt ../notes/; rsync -a --delete sub/ @OUT@/"),
        Case(id="write-bash-c", family=w, technique="bash -c", command="""bash -c 'bash -c "echo x > ../notes/nested.txt"'"""),
        Case(id="write-base64", family=w, technique="base64", command=f'eval "$(echo {b64("echo x > ../notes/b64.txt; rm -f @OUT@/keep.txt")} | base64 -d)"'),
        Case(id="write-touch-chmod", family=w, technique="redirect", command="touch -d 2000-01-01 ../notes/n.txt; chmod 000 @OUT@/secret.txt; truncate -s 0 @DATA@/MEMORY.md"),
        Case(id="write-mkfifo", family=w, technique="redirect", command="mkfifo ../notes/f @OUT@/f"),
        Case(id="write-umount-ws", family=w, technique="mounts", command=f"""python3 -c "{UMOUNT2.format(paths=['@WS@'])}"; echo x > @NOTES@/u.txt; echo x > ../notes/u2.txt"""),
        Case(id="write-unshare", family=w, technique="mounts", command="unshare -rm sh -c 'echo x > @CANARY@; echo x > ../notes/u.txt; echo x > @OUT@/u.txt'"),
        # Escaped likewise, next to the workspace.
        Case(id="write-spill-follows", family=w, technique="symlink", command="rm -rf .overseer/spill; ln -s ../../notes .overseer/spill && head -c 60000 /dev/zero | tr '\\0' y"),
        # Escaped likewise, to an absolute path outside the data dir.
        Case(id="write-spill-follows-abs", family=w, technique="symlink", command="mv .overseer .ov; mkdir .overseer; ln -s @OUT@ .overseer/spill && seq 1 20000"),
        # Escaped until `after` stopped following symlinks: it moved the data dir's fallback MEMORY.md.
        Case(id="write-after-follows", family=w, technique="symlink", without=("memory",), command="ln -s ../../.. memory"),
    ]
    # fmt: on


def _instructions() -> list[Case]:
    i = "instructions"
    # fmt: off
    return [
        Case(id="instr-append", family=i, technique="redirect", command="echo x >> AGENTS.md; echo x > SOUL.md"),
        Case(id="instr-truncate", family=i, technique="redirect", command=": > overseer.yaml; : > .mcp.json; truncate -s0 memory/MEMORY.md"),
        Case(id="instr-tee", family=i, technique="redirect", command="printf x | tee -a memory/MEMORY.md AGENTS.md"),
        Case(id="instr-heredoc", family=i, technique="here-doc", command="cat > overseer.yaml <<'EOF'\nrules: {allow: [Bash]}\nEOF\ncat <<EOF >> SOUL.md\nobey\nEOF"),
        Case(id="instr-skill", family=i, technique="redirect", command=": > .overseer/skills/x/SKILL.md; mkdir .overseer/skills/y; echo x > .overseer/skills/y/SKILL.md"),
        Case(id="instr-fd", family=i, technique="redirect", command="exec 3<>AGENTS.md; echo x >&3; exec 4>>memory/MEMORY.md; echo x >&4"),
        Case(id="instr-rm", family=i, technique="redirect", command="rm -f AGENTS.md SOUL.md overseer.yaml .mcp.json; rm -rf memory .overseer"),
        Case(id="instr-mv", family=i, technique="mv", command="mv AGENTS.md A.md; mv SOUL.md x && echo y > SOUL.md; mv .overseer/skills sk"),
        Case(id="instr-cd", family=i, technique="cd", command="cd memory && echo x > MEMORY.md; cd ../.overseer/skills && mkdir y && echo x > y/SKILL.md"),
        Case(id="instr-proc", family=i, technique="proc", command="echo x > /proc/self/cwd/AGENTS.md; echo x > /proc/self/root@WS@/SOUL.md; echo x > /proc/1/cwd/overseer.yaml"),
        Case(id="instr-glob", family=i, technique="glob", command="""for f in *.md */*.md .overseer/*/*/*.md overseer.yaml; do echo x >> "$f"; done"""),
        Case(id="instr-py", family=i, technique="python3 -c", command="""python3 -c "open('AGENTS.md', 'a').write('x')"; python3 -c "import os; os.unlink('overseer.yaml')" """),
        Case(id="instr-py-replace", family=i, technique="python3 -c", command="""echo evil > evil && python3 -c "import os; os.replace('evil', 'SOUL.md')"; python3 -c "import os; os.rename('AGENTS.md', 'gone.md')" """),
        Case(id="instr-perl-i", family=i, technique="perl -e", command="perl -pi -e 's/^/x/' AGENTS.md memory/MEMORY.md"),
        Case(id="instr-perl-open", family=i, technique="perl -e", command="""perl -e 'open(F, ">", "SOUL.md"); print F "x"; unlink "overseer.yaml"'"""),
        Case(id="instr-sed-i", family=i, technique="sed", command="sed -i s/a/b/ AGENTS.md; sed -i s/e/x/ memory/MEMORY.md .overseer/skills/x/SKILL.md"),
        Case(id="instr-awk", family=i, technique="awk", command="""awk '{ print > "SOUL.md" }' readme.txt; awk 'BEGIN { print "x" >> "overseer.yaml" }'"""),
        Case(id="instr-cp", family=i, technique="cp", command="cp readme.txt AGENTS.md; cp --remove-destination readme.txt SOUL.md; cp -r sub .overseer/skills/y"),
        Case(id="instr-cp-reflink", family=i, technique="cp", command="cp --reflink=auto readme.txt memory/MEMORY.md; cp -f --reflink=always readme.txt overseer.yaml"),
        Case(id="instr-install", family=i, technique="copied binary", command="install -m644 readme.txt overseer.yaml; install -m644 readme.txt .overseer/skills/x/SKILL.md"),
        Case(id="instr-copied-cp", family=i, technique="copied binary", command="cp /bin/cp ./c && ./c readme.txt AGENTS.md; cp /bin/mv ./m && ./m readme.txt SOUL.md"),
        Case(id="instr-ln-sf", family=i, technique="symlink", command="ln -sf readme.txt AGENTS.md; ln -sfn sub .overseer/skills"),
        Case(id="instr-symlink-write", family=i, technique="symlink", command="ln -s AGENTS.md a && echo x >> a; ln -s .overseer/skills/x s && echo x > s/SKILL.md"),
        Case(id="instr-hardlink", family=i, technique="hard link", command="ln -f readme.txt SOUL.md; ln AGENTS.md a && echo x >> a"),
        Case(id="instr-dd", family=i, technique="dd", command="dd if=/dev/zero of=AGENTS.md bs=1 count=3 conv=notrunc status=none; echo x | dd of=SOUL.md status=none"),
        Case(id="instr-chmod-touch", family=i, technique="redirect", command="chmod 777 AGENTS.md; touch -d 2001-01-01 SOUL.md memory/MEMORY.md; chmod -R 777 .overseer"),
        Case(id="instr-tar-transform", family=i, technique="tar", command="tar -cf a.tar readme.txt --transform s/readme.txt/AGENTS.md/ && tar -xf a.tar"),
        Case(id="instr-tar-tree", family=i, technique="tar", command="mkdir -p t/.overseer/skills/x t/memory && echo evil > t/.overseer/skills/x/SKILL.md && echo evil > t/memory/MEMORY.md && tar -C t -cf a.tar . && tar -xf a.tar"),
        Case(id="instr-tar-C", family=i, technique="tar", command="echo evil > SKILL.md && tar -cf a.tar SKILL.md && tar -xf a.tar -C .overseer/skills/x; tar -xf a.tar -C memory --transform s/SKILL/MEMORY/"),
        Case(id="instr-unzip", family=i, technique="zip", command="mkdir -p t/memory && echo evil > t/memory/MEMORY.md && echo evil > t/AGENTS.md && (cd t && zip -qr ../a.zip .) && unzip -o -q a.zip"),
        Case(id="instr-git-checkout", family=i, technique="git", command=f"mkdir r && cd r && git init -q && echo evil > AGENTS.md && git add . && {COMMIT} && cd .. && git --git-dir=r/.git --work-tree=. checkout -f HEAD -- AGENTS.md"),
        Case(id="instr-git-clean", family=i, technique="git", command="git init -q && git clean -fdxq; git clean -fdxq .overseer memory"),
        Case(id="instr-git-alias", family=i, technique="git", command="""git -c alias.x='!echo x >> SOUL.md; rm -f overseer.yaml' x"""),
        Case(id="instr-git-C", family=i, technique="git", command="git -C memory init -q && echo x > memory/MEMORY.md; git -C .overseer/skills init -q"),
        Case(id="instr-env-C", family=i, technique="env -C", command="env -C memory sh -c 'echo x > MEMORY.md'; env -C .overseer/skills/x sh -c 'echo x > SKILL.md'"),
        Case(id="instr-find-exec", family=i, technique="find -exec", command="""find . -name AGENTS.md -exec sh -c 'echo x > "$1"' _ {} \\;; find . -name '*.md' -delete"""),
        Case(id="instr-xargs", family=i, technique="xargs", command="echo AGENTS.md SOUL.md memory/MEMORY.md | xargs rm -f; echo x | xargs -I{} sh -c 'echo {} >> overseer.yaml'"),
        Case(id="instr-rsync", family=i, technique="rsync", command="rsync -a readme.txt AGENTS.md; rsync -a --delete sub/ .overseer/skills/; rsync -a readme.txt memory/MEMORY.md"),
        Case(id="instr-bash-c", family=i, technique="bash -c", command="""bash -c 'bash -c "echo x >> AGENTS.md; echo x > memory/MEMORY.md"'"""),
        Case(id="instr-base64", family=i, technique="base64", command=f'eval "$(echo {b64("echo x >> SOUL.md; rm -f AGENTS.md")} | base64 -d)"'),
        Case(id="instr-script", family=i, technique="script", command="printf 'echo x >> AGENTS.md\\nrm -f SOUL.md\\n' > x.sh && sh x.sh"),
        Case(id="instr-make", family=i, technique="make", command="printf 'all:\\n\\techo x >> SOUL.md\\n\\techo x > .overseer/skills/x/SKILL.md\\n' > Makefile && make -s"),
        Case(id="instr-edit-denied", family=i, technique="redirect", command="echo x >> conf/prod/app.ini; rm -rf conf/prod/*; mv conf/prod conf/p2"),
        # A command's processes must all be gone when it returns, or one could write after the check.
        Case(id="instr-bg-setsid", family=i, technique="background", command="mkfifo p; exec 3<>p; (setsid sleep 30 >/dev/null 2>&1 &); echo bg", fifo="p", expect="bg"),
        Case(id="instr-bg-nohup", family=i, technique="background", command="mkfifo p; exec 3<>p; nohup sleep 30 >/dev/null 2>&1 & disown; echo bg", fifo="p", expect="bg"),
        Case(id="instr-bg-doublefork", family=i, technique="background", fifo="p", expect="bg", command="""mkfifo p; exec 3<>p; python3 -c "
import os, time
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
time.sleep(30)" >/dev/null 2>&1; echo bg"""),
        Case(id="instr-bg-trap", family=i, technique="background", command="mkfifo p; exec 3<>p; (trap '' HUP TERM INT; sleep 30) >/dev/null 2>&1 & disown; echo bg", fifo="p", expect="bg"),
        # The sandbox's own mounts (a root-run sandbox keeps capabilities in its user namespace).
        # Escaped (as root) until `--cap-drop ALL`: `umount` of the read-only bind left the file writable.
        Case(id="instr-umount", family=i, technique="mounts", command="umount -n -l AGENTS.md; echo x >> AGENTS.md"),
        # Escaped likewise (as root), through the syscall.
        Case(id="instr-umount2", family=i, technique="mounts", command=f"""python3 -c "{UMOUNT2.format(paths=['AGENTS.md', 'memory/MEMORY.md', '.overseer/skills'])}"; echo x >> AGENTS.md; echo x >> memory/MEMORY.md; rm -rf .overseer/skills"""),
        # Escaped likewise (as root), remounting the bind read-write.
        Case(id="instr-remount-rw", family=i, technique="mounts", command=f"""python3 -c "{REMOUNT_RW.format(paths=['SOUL.md', 'overseer.yaml'])}"; echo x >> SOUL.md; echo x >> overseer.yaml"""),
        # Escaped likewise (as root): `mount -o remount,bind,rw` made SOUL.md writable.
        Case(id="instr-mount-remount", family=i, technique="mounts", command="mount -o remount,rw AGENTS.md; mount -o remount,bind,rw SOUL.md; echo x >> AGENTS.md; echo x >> SOUL.md"),
        Case(id="instr-unshare-umount", family=i, technique="mounts", command="""unshare -rm sh -c 'umount -n -l AGENTS.md; echo x >> AGENTS.md; mount -o remount,bind,rw SOUL.md; echo x >> SOUL.md'"""),
        # Escaped until the folders on the way were pinned: renaming the folder that holds a protected
        # file moved the read-only mount with it and freed the old path: memory/MEMORY.md was gone, and
        # `after` did not look (it had existed).
        Case(id="instr-mv-parent", family=i, technique="mv", command="mv memory m2"),
        # Escaped likewise, a new memory/MEMORY.md taking its place.
        Case(id="instr-mv-parent-replace", family=i, technique="mv", command="mv memory m2 && mkdir memory && echo evil > memory/MEMORY.md"),
        # Escaped likewise for the skills folder under .overseer/.
        Case(id="instr-mv-parent-skills", family=i, technique="mv", command="mv .overseer .o2 && mkdir -p .overseer/skills/x && echo evil > .overseer/skills/x/SKILL.md"),
        # Escaped likewise through python, spelled so no reading of the text could see it.
        Case(id="instr-rename-parent-py", family=i, technique="python3 -c", command="""python3 -c "import os; os.rename('mem' + 'ory', 'm'); os.mkdir('memory'); open('memory/MEMORY.md', 'w').write('evil')" """),
        # Escaped likewise for an `Edit`-denied path (conf/prod/**) whose parent could be renamed.
        Case(id="instr-mv-parent-edit-denied", family=i, technique="mv", command="mv conf c2 && mkdir -p conf/prod && echo evil > conf/prod/app.ini"),
        # Escaped likewise, rsync putting the copy back in place.
        Case(id="instr-mv-parent-rsync", family=i, technique="rsync", command="mv memory m2 && rsync -a m2/ memory/ && echo evil > memory/MEMORY.md"),
        # Would have escaped likewise (checked against the code before the pinning): swapping the folder
        # with another in one step (renameat2's RENAME_EXCHANGE).
        Case(id="instr-exchange-parent", family=i, technique="python3 -c", command="""mkdir m2 && echo evil > m2/MEMORY.md && python3 -c "import ctypes; libc = ctypes.CDLL(None); print(libc.renameat2(-100, b'm2', -100, b'memory', 2))"; cat memory/MEMORY.md"""),
    ]
    # fmt: on


def _creations() -> list[Case]:
    """Instruction files that did not exist: the kernel cannot stop their creation; `after` must
    move each out of the workspace and flag the result."""
    i = "instructions"
    soul = ("SOUL.md",)
    # fmt: off
    return [
        Case(id="create-user-md", family=i, technique="redirect", command="echo x > USER.md", creates=("USER.md",)),
        Case(id="create-tools-md", family=i, technique="here-doc", command="cat > TOOLS.md <<EOF\nx\nEOF", creates=("TOOLS.md",)),
        Case(id="create-memory-md", family=i, technique="redirect", command="echo x > MEMORY.md", creates=("MEMORY.md",)),
        Case(id="create-heartbeat", family=i, technique="python3 -c", command="""python3 -c "open('HEARTBEAT.md', 'w').write('x')" """, creates=("HEARTBEAT.md",)),
        Case(id="create-modes", family=i, technique="redirect", command="mkdir -p .overseer/modes && echo x > .overseer/modes/m.md", creates=(".overseer/modes",)),
        Case(id="create-soul-echo", family=i, technique="redirect", without=soul, command="echo x > SOUL.md", creates=soul),
        Case(id="create-soul-py", family=i, technique="python3 -c", without=soul, command="""python3 -c "open('SOUL.md', 'w').write('x')" """, creates=soul),
        Case(id="create-soul-perl", family=i, technique="perl -e", without=soul, command="""perl -e 'open(F, ">", "SOUL.md"); print F "x"'""", creates=soul),
        Case(id="create-soul-awk", family=i, technique="awk", without=soul, command="""awk 'BEGIN { print "x" > "SOUL.md" }'""", creates=soul),
        Case(id="create-soul-sed-w", family=i, technique="sed", without=soul, command="sed -n 'w SOUL.md' readme.txt", creates=soul),
        Case(id="create-soul-symlink", family=i, technique="symlink", without=soul, command="ln -s readme.txt SOUL.md", creates=soul),
        Case(id="create-soul-hardlink", family=i, technique="hard link", without=soul, command="ln readme.txt SOUL.md", creates=soul),
        Case(id="create-soul-dir", family=i, technique="redirect", without=soul, command="mkdir SOUL.md", creates=soul),
        Case(id="create-soul-cp", family=i, technique="cp", without=soul, command="cp --reflink=auto readme.txt SOUL.md", creates=soul),
        Case(id="create-soul-mv", family=i, technique="mv", without=soul, command="echo x > s && mv s SOUL.md", creates=soul),
        Case(id="create-soul-tar", family=i, technique="tar", without=soul, command="mkdir t && echo x > t/SOUL.md && tar -C t -cf a.tar SOUL.md && tar -xf a.tar", creates=soul),
        Case(id="create-soul-unzip", family=i, technique="zip", without=soul, command="mkdir t && echo x > t/SOUL.md && (cd t && zip -q ../a.zip SOUL.md) && unzip -q a.zip", creates=soul),
        Case(id="create-soul-git", family=i, technique="git", without=soul, command=f"mkdir r && cd r && git init -q && echo x > SOUL.md && git add . && {COMMIT} && cd .. && git --git-dir=r/.git --work-tree=. checkout HEAD -- SOUL.md", creates=soul),
        Case(id="create-soul-make", family=i, technique="make", without=soul, command="printf 'SOUL.md:\\n\\techo x > $@\\n' > Makefile && make -s", creates=soul),
        Case(id="create-soul-script", family=i, technique="script", without=soul, command="printf 'echo x > SOUL.md\\n' > x.sh && sh x.sh", creates=soul),
        Case(id="create-soul-dd", family=i, technique="dd", without=soul, command="echo x | dd of=SOUL.md status=none", creates=soul),
        Case(id="create-soul-find", family=i, technique="find -exec", without=soul, command="find . -maxdepth 1 -name readme.txt -exec cp {} SOUL.md \\;", creates=soul),
        Case(id="create-soul-xargs", family=i, technique="xargs", without=soul, command="echo SOUL.md | xargs touch", creates=soul),
        Case(id="create-soul-rsync", family=i, technique="rsync", without=soul, command="rsync -a readme.txt SOUL.md", creates=soul),
        Case(id="create-soul-env-C", family=i, technique="env -C", without=soul, command="mkdir d && env -C d sh -c 'echo x > ../SOUL.md'", creates=soul),
        Case(id="create-soul-bash-c", family=i, technique="bash -c", without=soul, command="""bash -c 'bash -c "echo x > SOUL.md"'""", creates=soul),
        Case(id="create-soul-base64", family=i, technique="base64", without=soul, command=f'eval "$(echo {b64("echo x > SOUL.md")} | base64 -d)"', creates=soul),
        Case(id="create-soul-proc", family=i, technique="proc", without=soul, command="echo x > /proc/self/cwd/SOUL.md", creates=soul),
        Case(id="create-memory-dir", family=i, technique="redirect", without=("memory",), command="mkdir memory && echo x > memory/MEMORY.md", creates=("memory/MEMORY.md",)),
        Case(id="create-memory-file", family=i, technique="redirect", without=("memory/MEMORY.md",), command="echo x > memory/MEMORY.md", creates=("memory/MEMORY.md",)),
        Case(id="create-skills", family=i, technique="redirect", without=(".overseer",), command="mkdir -p .overseer/skills/x && echo x > .overseer/skills/x/SKILL.md", creates=(".overseer/skills",)),
        Case(id="create-overseer-yaml", family=i, technique="tar", without=("overseer.yaml",), command="mkdir t && echo x > t/overseer.yaml && tar -C t -cf a.tar overseer.yaml && tar -xf a.tar", creates=("overseer.yaml",)),
        Case(id="create-mcp-json", family=i, technique="redirect", without=(".mcp.json",), command="echo '{}' > .mcp.json", creates=(".mcp.json",)),
        Case(id="create-agents-md", family=i, technique="cp", without=("AGENTS.md",), command="cp readme.txt AGENTS.md", creates=("AGENTS.md",)),
        # Failed (not an escape) until the quarantine kept paths: MEMORY.md and memory/MEMORY.md were
        # both kept as <quarantine>/MEMORY.md, the second over the first, though the note named both.
        Case(id="create-several", family=i, technique="redirect", without=("memory",), command="echo 1 > USER.md; echo 2 > MEMORY.md; mkdir memory && echo 3 > memory/MEMORY.md; echo 4 > HEARTBEAT.md", creates=("USER.md", "MEMORY.md", "memory/MEMORY.md", "HEARTBEAT.md")),
    ]
    # fmt: on


def _controls() -> list[Case]:
    """What the sandbox must leave working: one per technique, so no attack passes because the
    mechanism itself was broken."""
    c = "control"
    # fmt: off
    return [
        Case(id="control-read", family=c, technique="redirect", command="cat readme.txt; cat < sub/code.py", expect=README),
        Case(id="control-write", family=c, technique="redirect", command="echo hello > notes.txt && echo more >> notes.txt", changes={"notes.txt": "hello\nmore\n"}),
        Case(id="control-heredoc", family=c, technique="here-doc", command="cat > notes.txt <<'EOF'\nfrom a here-doc\nEOF", changes={"notes.txt": "from a here-doc\n"}),
        Case(id="control-cd", family=c, technique="cd", command="cd sub && cat code.py && cd .. && pwd", expect=CODE),
        Case(id="control-proc", family=c, technique="proc", command="cat /proc/self/cwd/readme.txt", expect=README),
        Case(id="control-glob", family=c, technique="glob", command="cat ./*.txt sub/*.py", expect=CODE),
        Case(id="control-python", family=c, technique="python3 -c", command="""python3 -c "print(open('readme.txt').read()); open('notes.txt', 'w').write('py')" """, expect=README, changes={"notes.txt": "py"}),
        Case(id="control-perl", family=c, technique="perl -e", command="perl -ne print readme.txt", expect=README),
        Case(id="control-awk", family=c, technique="awk", command="awk 1 readme.txt", expect=README),
        Case(id="control-sed", family=c, technique="sed", command="sed -n p readme.txt && sed -n 'w notes.txt' readme.txt", expect=README, changes={"notes.txt": README + "\n"}),
        Case(id="control-copied-binary", family=c, technique="copied binary", command="cp /bin/cat ./c && ./c readme.txt", expect=README),
        Case(id="control-script", family=c, technique="script", command="printf 'cat readme.txt\\n' > x.sh && sh x.sh", expect=README),
        Case(id="control-make", family=c, technique="make", command="printf 'all:\\n\\t@cat readme.txt\\n' > Makefile && make -s", expect=README),
        Case(id="control-tar", family=c, technique="tar", command="tar -cf a.tar readme.txt && mkdir o && tar -xf a.tar -C o && cat o/readme.txt", expect=README),
        Case(id="control-zip", family=c, technique="zip", command="zip -q a.zip readme.txt && unzip -p a.zip", expect=README),
        Case(id="control-git", family=c, technique="git", command=f"git init -q && git add readme.txt && {COMMIT} && git show HEAD:readme.txt", expect=README),
        Case(id="control-hardlink", family=c, technique="hard link", command="ln readme.txt r && cat r", expect=README),
        Case(id="control-symlink", family=c, technique="symlink", command="ln -s readme.txt r && cat r", expect=README),
        Case(id="control-env-C", family=c, technique="env -C", command="env -C sub cat code.py", expect=CODE),
        Case(id="control-find", family=c, technique="find -exec", command="find . -name readme.txt -exec cat {} +", expect=README),
        Case(id="control-xargs", family=c, technique="xargs", command="echo readme.txt | xargs cat", expect=README),
        Case(id="control-dd", family=c, technique="dd", command="dd if=readme.txt status=none", expect=README),
        Case(id="control-cp", family=c, technique="cp", command="cp --reflink=auto readme.txt notes.txt && cat notes.txt", expect=README, changes={"notes.txt": README + "\n"}),
        Case(id="control-mv", family=c, technique="mv", command="cp readme.txt r && mv r notes.txt", changes={"notes.txt": README + "\n"}),
        Case(id="control-rsync", family=c, technique="rsync", command="rsync -a readme.txt notes.txt && cat notes.txt", expect=README),
        Case(id="control-bash-c", family=c, technique="bash -c", command="""bash -c 'bash -c "cat readme.txt"'""", expect=README),
        Case(id="control-base64", family=c, technique="base64", command="base64 readme.txt | base64 -d", expect=README),
        Case(id="control-read-root", family=c, technique="redirect", command="cat @DATA@/skills/demo/SKILL.md", expect=SKILL),
        Case(id="control-home-tmp", family=c, technique="redirect", command="echo h > ~/cache && echo t > /tmp/t && cat ~/cache /tmp/t", expect="h\nt"),
        Case(id="control-mounts", family=c, technique="mounts", command="unshare -U sh -c 'echo in-a-namespace'", expect="in-a-namespace"),
        Case(id="control-background", family=c, technique="background", command="sleep 0.01 & wait; echo waited", expect="waited"),
        Case(id="control-instructions-readable", family=c, technique="redirect", command="cat AGENTS.md memory/MEMORY.md .overseer/skills/x/SKILL.md conf/prod/app.ini", expect="mode=prod"),
        Case(id="control-unprotect", family=c, technique="redirect", unprotect=("AGENTS.md",), command="echo x >> AGENTS.md", changes={"AGENTS.md": "Be helpful.\nx\n"}),
        Case(id="control-create-plain", family=c, technique="redirect", command="mkdir -p docs && echo x > docs/GUIDE.md", changes={"docs/GUIDE.md": "x\n"}),
        Case(id="control-hidden-folder-lists", family=c, technique="redirect", command="ls secrets team/charlie && echo listed", expect="listed"),
    ]
    # fmt: on


ALL_CASES: tuple[Case, ...] = (
    *_reads(), *_agents(), *_writes(), *_instructions(), *_creations(), *_controls()
)
CASES: tuple[Case, ...] = tuple(c for c in ALL_CASES if c.runnable())
"""The cases whose programs this machine has."""
LEFT_OUT: tuple[Case, ...] = tuple(c for c in ALL_CASES if not c.runnable())
