#!/usr/bin/env bash
# `acx-oci dev install-sdk` runs this (shipped in the package; scripts/install-sdk.sh execs it from a clone).
# Install the official model SDKs (openai, anthropic) for the *system* interpreter /usr/bin/python3 — the one
# that runs inside the sandbox, whose root binds the host's /usr read-only — into a directory of their own:
#
#   /usr/local/lib/acx-oci-sdk      (override: ACX_SDK_DIR=...)
#
# Nothing goes into /usr/lib/python3/dist-packages or /usr/local/lib/python3.*/dist-packages, so the default
# sys.path of /usr/bin/python3 is unchanged (the grader runs `/usr/bin/python3 -m pytest` and must not pick up
# new pytest plugins such as anyio's). An agent opts in with
#     sys.path.insert(0, "/usr/local/lib/acx-oci-sdk"); from openai import OpenAI
#
# Idempotent: when the directory already imports both SDKs at the pinned versions, it only prints them.
# The install is built in a temporary sibling directory and renamed into place, so a concurrent or failed run
# never leaves a half-filled directory behind. Prints "openai X.Y.Z anthropic A.B.C" on stdout.
#
# The wheels come from this machine's pip (pyenv python3), which must have the system interpreter's
# major.minor (compiled parts: pydantic-core, jiter); otherwise pip is told that version explicitly and takes
# binary wheels only.
set -euo pipefail

DIR=${ACX_SDK_DIR:-/usr/local/lib/acx-oci-sdk}
SYSPY=${ACX_SYSTEM_PYTHON:-/usr/bin/python3}
OPENAI_VERSION=${ACX_OPENAI_VERSION:-3.57.0}
ANTHROPIC_VERSION=${ACX_ANTHROPIC_VERSION:-2.15.0}
PIP_PY=${PYTHON:-python3}

probe() {  # prints the versions when both SDKs import from $1 with the system interpreter
  "$SYSPY" -I -c '
import sys
sys.path.insert(0, sys.argv[1])
import openai, anthropic
assert openai.__file__.startswith(sys.argv[1]) and anthropic.__file__.startswith(sys.argv[1])
print("openai", openai.__version__, "anthropic", anthropic.__version__)
' "$1" 2>/dev/null
}

want="openai $OPENAI_VERSION anthropic $ANTHROPIC_VERSION"
if [ -d "$DIR" ] && [ "$(probe "$DIR" || true)" = "$want" ]; then
  echo "$want"
  exit 0
fi

SUDO=""
parent=$(dirname "$DIR")
if [ ! -w "$parent" ] && [ "$(id -u)" != "0" ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
$SUDO mkdir -p "$parent"

sysver=$("$SYSPY" -I -c 'import sys; print("%d.%d" % sys.version_info[:2])')
pipver=$("$PIP_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
extra=()
if [ "$sysver" != "$pipver" ]; then
  extra=(--python-version "$sysver" --only-binary=:all:)
fi

tmp=$($SUDO mktemp -d "$parent/.acx-oci-sdk.XXXXXX")
trap '$SUDO rm -rf "$tmp"' EXIT
# Byte-compiled below by the system interpreter itself: the sandbox sees /usr read-only (and sets
# PYTHONDONTWRITEBYTECODE), so without .pyc files every agent would recompile openai+pydantic at each start.
$SUDO "$PIP_PY" -m pip install -q --disable-pip-version-check --no-warn-conflicts --no-compile \
  --target "$tmp" ${extra[@]+"${extra[@]}"} "openai==$OPENAI_VERSION" "anthropic==$ANTHROPIC_VERSION" >&2
$SUDO rm -rf "$tmp/bin"   # console scripts point at the pip interpreter, not the system one
$SUDO "$SYSPY" -I -m compileall -q -j 0 "$tmp" >/dev/null || true
$SUDO chmod -R a+rX,go-w "$tmp"
$SUDO chmod 0755 "$tmp"
got=$(probe "$tmp" || true)
if [ "$got" != "$want" ]; then
  echo "install-sdk: $SYSPY cannot import the SDKs installed into $tmp (got: '${got}')" >&2
  exit 1
fi
if [ -e "$DIR" ]; then
  $SUDO rm -rf "$DIR.old"
  $SUDO mv "$DIR" "$DIR.old"
fi
$SUDO mv "$tmp" "$DIR"
$SUDO rm -rf "$DIR.old"
trap - EXIT
echo "$want"
