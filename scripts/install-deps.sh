#!/usr/bin/env bash
# scripts/install-deps.sh -- install what building, testing and benchmarking
# sqlq needs on Debian or Ubuntu, with apt-get.  Does nothing (and needs no
# network) when every package is already installed.  Runs as root, or
# through sudo when not root.
#
# An entry "a|b" is satisfied when either package is installed; "a" is
# installed when neither is.  The PostgreSQL server is only run by the tests,
# as throwaway servers (tests/servers/postgres.sh): when it is installed here
# for the first time, Debian's "main" cluster on port 5432 is not created.
set -euo pipefail

packages=(
  build-essential pkg-config cmake  # the build
  libsqlite3-dev                    # the SQLite backend
  libpq-dev                         # the PostgreSQL backend
  libjansson-dev                    # the CLI's JSON output
  libcmocka-dev valgrind            # the C tests
  'postgresql|postgresql-15'        # the PostgreSQL tests' server
  'postgresql-client|postgresql-client-15'  # and psql
  libmariadb-dev                    # the MySQL/MariaDB backend
  mariadb-server mariadb-client     # the MariaDB tests' servers, and mariadb
  sqlite3 python3                   # the benchmark's peers and reports
)
server_package=postgresql
createcluster_conf=/etc/postgresql-common/createcluster.conf

# installed PACKAGE: dpkg has PACKAGE installed.
installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
for entry in "${packages[@]}"; do
  IFS='|' read -r -a alternatives <<<"$entry"
  found=0
  for package in "${alternatives[@]}"; do
    if installed "$package"; then
      found=1
      break
    fi
  done
  if [ "$found" = 0 ]; then
    missing+=("${alternatives[0]}")
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

# Installing the server package creates and starts a "main" cluster on port
# 5432 unless createcluster.conf says otherwise.  That file belongs to
# postgresql-common, so it only needs writing before that is first installed;
# UCF_FORCE_CONFFOLD then keeps it when postgresql-common installs its own.
install_env=(DEBIAN_FRONTEND=noninteractive)
if [[ " ${missing[*]} " == *" $server_package "* ]]; then
  if [ ! -e "$createcluster_conf" ]; then
    echo "install-deps: writing $createcluster_conf (create_main_cluster = false)"
    "${as_root[@]}" mkdir -p "$(dirname "$createcluster_conf")"
    echo 'create_main_cluster = false' | "${as_root[@]}" tee "$createcluster_conf" >/dev/null
  fi
  install_env+=(UCF_FORCE_CONFFOLD=1)
fi

# Services installed now are not started: a policy-rc.d that says no (exit
# 101) while apt-get runs, unless the machine has one of its own.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# scripts/install-deps.sh: start no service while installing\nexit 101\n' |
    "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  own_policy=1
fi
remove_policy() {
  if [ "$own_policy" = 1 ]; then
    "${as_root[@]}" rm -f "$policy"
  fi
}
trap remove_policy EXIT

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env "${install_env[@]}" \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
