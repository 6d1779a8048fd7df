#!/usr/bin/env bash
# The weekly check: does the code still pass its static checks and fast tests with the NEWEST releases of every
# dependency? (scripts/test.sh installs requirements-test.lock, so a new release never breaks it by surprise; this
# script is where new releases are met on purpose, e.g. from a weekly scheduled job.)
#
#   scripts/check-newest.sh            a throwaway venv with `pip install -e '.[test]'` unpinned, then ruff, mypy,
#                                      import-linter and a few fast tests; prints what differs from the lock
#   scripts/check-newest.sh --write    the same, then renews requirements-test.lock when everything passed
#
# Exit 0: the newest versions pass (commit the renewed lock with --write); non-zero: the first failure above.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
write=0
[ "${1:-}" = "--write" ] && write=1
venv=$(mktemp -d /tmp/acx-newest.XXXXXX)
trap 'rm -rf "$venv"' EXIT
$PY -m venv "$venv"
# PyPI alone, as on a fresh machine: no local wheel directories or extra indexes from this machine's pip config.
clean() { env $(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/-u \1/p' | grep -v PIP_CERT) PIP_CONFIG_FILE=/dev/null "$@"; }
clean "$venv/bin/python" -m pip install -q --upgrade pip
clean "$venv/bin/python" -m pip install -q -e '.[test]'
echo "newest versions that differ from requirements-test.lock:"
"$venv/bin/python" -m pip freeze --exclude-editable | tr 'A-Z_' 'a-z-' | sort > "$venv/newest.txt"
sed -n 's/^\([^ #][^ ]*\) .*/\1/p' requirements-test.lock | tr 'A-Z_' 'a-z-' | sort > "$venv/locked.txt"
comm -13 "$venv/locked.txt" "$venv/newest.txt" | sed 's/^/  /' || true
"$venv/bin/python" -m ruff check acx_oci tests benchmarks
"$venv/bin/python" -m mypy
"$venv/bin/lint-imports" --no-cache
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_startup.py tests/test_architecture.py tests/test_docs.py
if [ "$write" = 1 ]; then
  clean "$venv/bin/python" scripts/lock_deps.py
  echo "requirements-test.lock renewed: review and commit it"
fi
