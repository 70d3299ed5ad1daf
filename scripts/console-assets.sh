#!/usr/bin/env bash
# The web console's third-party scripts, fetched from the npm registry with `npm pack`
# (no npm install, no build step) into python/kafkacore/console/static/vendor/ (gitignored;
# the wheel includes it): htmx (partial page updates), its SSE extension (live updates)
# and uPlot (charts). Every tarball and every extracted file is checked against the
# sha256 pinned here; a mismatch stops with status 1 and leaves vendor/ as it was.
# Without npm or without the registry (offline) it warns and exits 0: the console then
# runs without them (full page loads, no charts) and says so on every page.
# Quick when the files are already there with the pinned hashes.
set -euo pipefail

cd "$(dirname "$0")/.."
VENDOR=python/kafkacore/console/static/vendor

# package@version  tarball sha256
PACKAGES=(
  "htmx.org@2.0.11 165a2655073e9e6e55e307a7c74e8ebcdb76afb7701f9c16cfd106a13add408e"
  "htmx-ext-sse@2.2.4 90b46f5ab915ba2f64e6348448c8dba509277a47e15c125ffb65754eb4f6b5dc"
  "uplot@1.6.32 4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d"
)
# file in the package -> name in vendor/, sha256
FILES=(
  "htmx.org@2.0.11 package/dist/htmx.min.js htmx.min.js d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"
  "htmx-ext-sse@2.2.4 package/dist/sse.min.js htmx-sse.min.js 98a46496de0c3605fbffdce9167ba427bdd9553184f83f149c261891a92c0136"
  "uplot@1.6.32 package/dist/uPlot.iife.min.js uPlot.iife.min.js 19c8d4c6ad88929a79f4ae49d6f7161566dfd0ba3d15cc495e974f787eb78f1f"
  "uplot@1.6.32 package/dist/uPlot.min.css uPlot.min.css df630c6a8d6f8eeaff264b50f73ce5b114f646ffd9a0bb74f049b0a00135fa04"
)

sha() { sha256sum "$1" | cut -d' ' -f1; }

present=1
for entry in "${FILES[@]}"; do
  read -r _pkg _src name hash <<<"$entry"
  if [[ ! -f "$VENDOR/$name" || "$(sha "$VENDOR/$name")" != "$hash" ]]; then present=0; fi
done
if [[ $present == 1 ]]; then exit 0; fi

if ! command -v npm >/dev/null; then
  echo "console-assets: warning: npm is missing (apt-get install npm): the console runs without htmx/uPlot" >&2
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "${PACKAGES[@]}"; do
  read -r pkg hash <<<"$entry"
  if ! tarball=$(cd "$work" && npm pack --silent "$pkg" 2>/dev/null | tail -1) || [[ -z "$tarball" ]]; then
    echo "console-assets: warning: npm pack $pkg failed (offline?): the console runs without htmx/uPlot" >&2
    exit 0
  fi
  if [[ "$(sha "$work/$tarball")" != "$hash" ]]; then
    echo "console-assets: $pkg: sha256 $(sha "$work/$tarball") is not the pinned $hash" >&2
    exit 1
  fi
  mkdir -p "$work/$pkg"
  tar xzf "$work/$tarball" -C "$work/$pkg"
done
mkdir -p "$work/out"
for entry in "${FILES[@]}"; do
  read -r pkg src name hash <<<"$entry"
  if [[ "$(sha "$work/$pkg/$src")" != "$hash" ]]; then
    echo "console-assets: $pkg $src: sha256 does not match the pinned $hash" >&2
    exit 1
  fi
  cp "$work/$pkg/$src" "$work/out/$name"
done
mkdir -p "$VENDOR"
cp "$work"/out/* "$VENDOR/"
echo "console-assets: htmx, htmx-ext-sse, uPlot in $VENDOR"
