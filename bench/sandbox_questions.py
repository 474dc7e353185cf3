"""How many questions a working day of shell commands asks, with and without `sandbox.auto_allow`.

A scripted day of 120 commands a developer's agent runs (builds, tests, git, package installs,
searches, edits through the shell) goes through the gate's evaluation as the host configures it:
the default policies, a typical team's rules (`ask: Bash(git push *)`, `deny: Bash(rm -rf *)`,
`Read(./.env)`), the instruction-file guard and the sandbox's review. Nothing runs: this counts
decisions. Prints JSON: asks, allows and denies per setting.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.rules.bootstrap_guard import BootstrapGuard  # noqa: E402
from backend.approvals.confinement import Confinement  # noqa: E402
from backend.rules.policy_engine import DEFAULT_POLICIES, PolicyEngine, ToolCallView  # noqa: E402
from backend.rules.grammar import RuleSet  # noqa: E402
from backend.sandbox.launcher import Sandbox, detect  # noqa: E402

EXEC = "mcp__shell__exec"
RULES = {
    "allow": ["Bash(ls *)", "Bash(cat *)", "Bash(git status *)", "Bash(git diff *)", "Bash(pytest *)"],
    "ask": ["Bash(git push *)", "Bash(npm publish *)"],
    "deny": ["Bash(rm -rf *)", "Read(./.env)"],
}
DAY = [
    *["ls -la", "ls src", "cat README.md", "cat pyproject.toml", "git status", "git diff", "git diff --stat"],
    *["git log --oneline -20", "git branch -a", "git add -A", "git commit -m 'wip'", "git checkout -b feature/x"],
    *["git stash", "git stash pop", "git fetch origin", "git rebase origin/main", "git push origin feature/x"],
    *["git merge --no-ff feature/y", "git tag v1.2.0", "git show HEAD~1", "git blame src/app.py", "git rev-parse HEAD"],
    *["pytest -q", "pytest -q tests/test_api.py", "pytest -x -k login", "python -m pytest --lf", "make test"],
    *["make build", "make lint", "npm test", "npm run build", "npm run lint", "npm ci", "npm install lodash"],
    *["pip install -e .", "pip install requests", "uv sync", "cargo build", "cargo test", "go test ./...", "go build ./..."],
    *["grep -rn TODO src", "grep -rn 'def login' .", "rg -n parse_args", "find . -name '*.py' | wc -l", "wc -l src/*.py"],
    *["head -50 src/app.py", "tail -n 100 build.log", "sed -n 1,40p src/cli.py", "awk '{print $1}' data.csv | sort | uniq -c"],
    *["python scripts/gen.py", "python -c 'import app; print(app.__version__)'", "node scripts/check.js", "bash scripts/ci.sh"],
    *["mkdir -p build/out", "cp config.example.yaml config.yaml", "mv old.txt archive/", "touch .gitkeep", "rm build/out/tmp.o"],
    *["tar -czf dist.tgz dist", "unzip -o fixtures.zip -d fixtures", "curl -s https://pypi.org/simple/requests/ | head"],
    *["sed -i 's/foo/bar/' src/app.py", "echo 'x = 1' >> src/config.py", "printf 'a\\nb\\n' > notes.txt", "tee out.txt < in.txt"],
    *["docker build -t app .", "ruff check .", "black --check .", "mypy src", "tsc --noEmit", "eslint src"],
    *["du -sh .", "df -h", "env | sort", "which python", "python --version", "node --version", "date", "uname -a"],
    *["ps aux | head", "jq .version package.json", "yq .name config.yaml", "diff -u a.txt b.txt", "sort -u words.txt"],
    *["xargs -n1 echo < list.txt", "find . -name '*.pyc' -delete", "chmod +x scripts/run.sh", "ln -s ../shared shared"],
    *["rm -rf node_modules", "rm -rf build", "cat .env", "echo hi > AGENTS.md", "npm publish", "git push --force"],
    *["python manage.py migrate", "python manage.py test", "alembic upgrade head", "psql -c 'select 1'", "redis-cli ping"],
    *["terraform plan", "kubectl get pods", "helm lint chart", "ansible-lint", "shellcheck scripts/*.sh", "make clean"],
    *["cat /etc/os-release", "ls ~", "ls ..", "cd src && ls", "cd .. && ls", "pwd", "true", "echo done"],
]


def count(*, auto_allow: bool, workspace: Path) -> dict[str, int]:
    policy = PolicyEngine(RuleSet.from_config(RULES, source="user"), dict(DEFAULT_POLICIES))
    guard = BootstrapGuard()
    confinement = Confinement(sandbox=Sandbox(detect("auto")), data_dir=workspace / ".data", auto_allow=auto_allow)
    verdicts: Counter[str] = Counter()
    for command in DAY:
        view = ToolCallView(name=EXEC, arguments={"command": command}, workspace=workspace)
        evaluation = confinement.review(EXEC, policy.evaluate(view))
        verdicts[guard.review(view, evaluation).verdict] += 1
    return dict(verdicts)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        without, with_auto = count(auto_allow=False, workspace=workspace), count(auto_allow=True, workspace=workspace)
    print(
        json.dumps(
            {
                "commands": len(DAY),
                "backend": detect("auto").backend,
                "without_auto_allow": without,
                "with_auto_allow": with_auto,
                "questions_saved": without.get("ask", 0) - with_auto.get("ask", 0),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
