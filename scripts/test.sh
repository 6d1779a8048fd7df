#!/usr/bin/env bash
# The test command: installs what is missing, then ruff, mypy (strict), import-linter (layer contracts) and pytest.
# The tests start their own CNCF Distribution registry (and go-containerregistry's, built by
# scripts/build-ggcr.sh) on 127.0.0.1 and run agents in bubblewrap,
# grading with Debian's pytest (/usr/bin/python3 -m pytest from python3-pytest).
#
# Arguments go to pytest unchanged:  scripts/test.sh -k referrers -x
#
# Slow tests (marker `slow`: repeats 1-2 of the concurrency stress tests, certifications, image builds; repeat 0
# always runs) are skipped by default. Repeats 3-9 (marker `stress`) run only with ACX_STRESS=1 (CI: 30 min). Enable them with any of:
#   scripts/test.sh --runslow      ACX_SLOW=1 scripts/test.sh      CI=true scripts/test.sh
# Only the slow ones:  scripts/test.sh --runslow -m slow
# .ci/run exports CI=true, so CI runs everything.
#
# Conformance vectors: tests/vectors (in the repository), or ACX_VECTORS=DIR; missing vectors FAIL, never skip.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
need=()
command -v docker-registry >/dev/null 2>&1 || need+=(docker-registry)
command -v skopeo >/dev/null 2>&1 || need+=(skopeo)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v mmdebstrap >/dev/null 2>&1 || need+=(mmdebstrap)
command -v jq >/dev/null 2>&1 || need+=(jq)        # the walk-through, docs/getting-started.md (tests/test_readme_walkthrough.py)
command -v curl >/dev/null 2>&1 || need+=(curl)
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
# an environment plugin in the grading sandbox, as real repositories' environments have (tests/exams/test_tamper_runner.py)
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pytest_mock' >/dev/null 2>&1 || need+=(python3-pytest-mock)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]} with apt"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q "${need[@]}" >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q "${need[@]}" >/dev/null; }
fi

# install_tool VAR SCRIPT WHAT: export VAR as SCRIPT's output (a path in the cache) unless VAR is set already.
# If SCRIPT fails, CI stops (the tests for WHAT must run there); elsewhere they skip, with a warning.
install_tool() {
  local var=$1 script=$2 what=$3 value
  [ -n "${!var:-}" ] && return 0
  if value=$(bash "scripts/$script"); then
    export "$var=$value"
  elif [ "${CI:-}" = "true" ]; then
    echo "scripts/$script failed: $what cannot run" >&2
    exit 1
  else
    unset "$var"
    echo "warning: scripts/$script failed; $what will skip" >&2
  fi
}

# The tests' second registry: go-containerregistry's, with the OCI 1.1 Referrers API, built from
# Debian packages once per machine (a ~50 MB download and ~25-50 s of build; then a cache hit).
install_tool ACX_GGCR_BIN build-ggcr.sh "the tests on the ggcr registry"
# The real sigsum-witness (Debian trixie's sigsum-go) for the tlog-witness interop tests: one .deb, unpacked into the cache.
install_tool ACX_SIGSUM_WITNESS install-sigsum-witness.sh "the witness interop tests"
# The real cosign (Debian trixie's cosign 2.5) for the cosign interop tests: one .deb, unpacked into the cache.
install_tool ACX_COSIGN install-cosign.sh "the cosign interop tests"
# The real cosign 3 (Debian sid's cosign 3.x) for the cosign 3 interop and policy tests: one .deb, its own cache.
install_tool ACX_COSIGN3 install-cosign3.sh "the cosign 3 interop tests"

PY=${PYTHON:-python3}
# The official model SDKs for the sandbox's interpreter (/usr/bin/python3), in a directory of their own under
# /usr/local/lib (visible read-only in the sandbox; not on the grader's default path): the LLM agents' tests.
if ! ACX_SDK=$(PYTHON=$PY bash scripts/install-sdk.sh 2>/tmp/acx-install-sdk.log); then
  echo "scripts/install-sdk.sh failed (see /tmp/acx-install-sdk.log): the model-egress tests will skip" >&2
  [ "${CI:-}" = "true" ] && exit 1
fi
echo "model SDKs for the sandbox: ${ACX_SDK:-none}"
# The test environment comes from requirements-test.lock (exact versions, sha256-checked: the command passes
# on a fresh machine whatever PyPI publishes later; scripts/check-newest.sh tries the newest versions).
# (Re)install when the lock changed since this interpreter last installed it, a dependency is missing, or the
# installed acx_oci is another checkout's; otherwise nothing is downloaded.
here=$(pwd -P)
lock_sum=$(sha256sum requirements-test.lock | cut -d' ' -f1)
stamp_dir="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/acx-oci"
stamp="$stamp_dir/test-lock.$($PY -c 'import sys; print(sys.prefix)' | sha256sum | cut -c1-16)"  # one per interpreter
where=$(cd / && $PY -c 'import acx_oci, os; print(os.path.dirname(os.path.dirname(os.path.realpath(acx_oci.__file__))))' 2>/dev/null || true)
if [ "$where" != "$here" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$lock_sum" ] \
    || ! $PY -c 'import pytest, mypy, ruff, trueskill, starlette, uvicorn, httpx, bcrypt, importlinter, grimp, distributed, oras, orjson, xdist' >/dev/null 2>&1; then
  echo "installing the test environment from requirements-test.lock"
  $PY -m pip install -q --require-hashes --no-deps -r requirements-test.lock
  $PY -m pip install -q --no-deps --no-build-isolation -e .
  mkdir -p "$stamp_dir" && echo "$lock_sum" > "$stamp" || true
fi

$PY -m ruff check acx_oci tests benchmarks
$PY -m mypy
lint-imports --no-cache
# Serial by default. ACX_TEST_WORKERS=N runs N pytest-xdist workers, each test file on one worker (module
# fixtures, one registry per file), the slowest files first (tests/conftest.py: HEAVY_FIRST). Measured on two
# cores: 2293 s with two workers against 2392-2444 s serial, and the model agent of test_real_agent_page fell
# a level once (its games' time limits under the other worker's load): not the default on two cores.
workers=(-p no:xdist)
[ "${ACX_TEST_WORKERS:-0}" != "0" ] && workers=(-n "$ACX_TEST_WORKERS" --dist loadfile)
$PY -m pytest "${workers[@]}" --durations=25 "$@"  # the 25 slowest, for the CI budget (30 min)
