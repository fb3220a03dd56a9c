#!/usr/bin/env bash
# scripts/install-deps.sh -- install what building, testing and benchmarking
# sqlq needs on Debian or Ubuntu, with apt-get.  Does nothing (and needs no
# network) when every package is already installed.  Runs as root, or
# through sudo when not root.
set -euo pipefail

packages=(
  build-essential pkg-config cmake  # the build
  libsqlite3-dev                    # the SQLite backend
  libjansson-dev                    # the CLI's JSON output
  libcmocka-dev valgrind            # the C tests
  sqlite3 python3                   # the benchmark's peers and reports
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
