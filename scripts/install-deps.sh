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
# Postfix is likewise only run by the test tests/mail/postfix.sh, as a
# private instance: debconf is told "No configuration" (below).
# Prometheus is likewise only installed for its promtool (tests/cli/serve*.sh):
# its service is not started (policy-rc.d below) and the tests never run it.
# PgBouncer likewise: its service is not started; the tests run their own
# (tests/servers/pgbouncer.sh).
# The Firebird server is likewise only run by the tests
# (tests/servers/firebird.sh): its SYSDBA password is preseeded with debconf,
# so that installing asks nothing, and Debian's own firebird3.0 service is
# stopped and disabled, so that nothing is left listening on port 3050.
set -euo pipefail

packages=(
  build-essential pkg-config cmake  # the build
  dpkg-dev                          # dpkg-buildflags: scripts/test.sh's Release build
  libsqlite3-dev                    # the SQLite backend
  libpq-dev                         # the PostgreSQL backend
  libjansson-dev                    # the CLI's JSON output
  libmicrohttpd-dev                 # sqlq serve's HTTP server (built only when found)
  libcmocka-dev valgrind            # the C tests
  'postgresql|postgresql-15'        # the PostgreSQL tests' server
  'postgresql-client|postgresql-client-15'  # and psql
  pgbouncer                         # PostgreSQL through a transaction pooler (tests/servers/pgbouncer.sh)
  libmariadb-dev                    # the MySQL/MariaDB backend
  mariadb-server mariadb-client     # the MariaDB tests' servers, and mariadb
  galera-4 rsync                    # tests/servers/galera.sh: a three-node Galera cluster, rsync SST
  sqlite3 python3                   # the benchmark's peers and reports
  tzdata                            # schedules' time zones (src/tz.c) and their tests
  firebird-dev                      # the Firebird client: libfbclient, ibase.h
  firebird3.0-server firebird3.0-utils  # the Firebird tests' servers, isql-fb
  postfix                           # tests/mail: a private Postfix instance
  clang libclang-rt-14-dev          # the fuzzing harnesses: clang, libFuzzer, ASan, UBSan
  llvm                              # llvm-symbolizer, for readable sanitizer reports
  clang-format                      # the style test (.clang-format, scripts/format.sh)
  python3-pytest python3-venv       # bindings/python: its tests, and pip install into a venv
  python3-psycopg python3-mysqldb   # bindings/python: transactional enqueue through each driver
  prometheus curl                   # sqlq serve's tests: promtool check metrics, HTTP requests
  iproute2 nftables                 # tests/crash/*_netns.sh: network namespaces, links cut by dropping packets
  chromium python3-websocket        # tests/cli/dash.sh: the dashboard in headless Chromium (DevTools)
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

# Installing Postfix would remove another mail system (Debian's MTAs conflict
# with each other), and every one of them provides /usr/sbin/sendmail: a
# machine that has one keeps it, and tests/mail/postfix.sh fails there.
if [[ " ${missing[*]} " == *" postfix "* ]] && [ -e /usr/sbin/sendmail ]; then
  echo "install-deps: not installing postfix: another mail system provides /usr/sbin/sendmail" >&2
  kept=()
  for package in "${missing[@]}"; do
    if [ "$package" != postfix ]; then kept+=("$package"); fi
  done
  missing=("${kept[@]}")
fi

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

# Debian asks for the system instance's SYSDBA password when it installs the
# Firebird server.  The tests never use that instance (they run their own,
# with their own security database), so a random password is preseeded; the
# package stores it in /etc/firebird/3.0/SYSDBA.password, readable by root.
fb_server_package=firebird3.0-server
fb_service=firebird3.0
if [[ " ${missing[*]} " == *" $fb_server_package "* ]]; then
  fb_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  echo "$fb_server_package shared/firebird/sysdba_password/first_install password $fb_password" |
    "${as_root[@]}" debconf-set-selections
fi

# Debian asks what kind of mail system to set up when it installs Postfix.
# The test (tests/mail/postfix.sh) runs a Postfix instance of its own, with
# its own configuration and queue directories, so "No configuration" is
# preseeded: the package writes no /etc/postfix/main.cf, and the system's
# Postfix neither runs nor can start without one.
if [[ " ${missing[*]} " == *" postfix "* ]]; then
  echo "postfix postfix/main_mailer_type select No configuration" |
    "${as_root[@]}" debconf-set-selections
fi

# disable_fb_service: Debian's firebird3.0 service neither runs nor starts at
# boot.  A policy-rc.d that forbids starting services (ours, or the image's)
# keeps it from starting while installing; a machine whose own policy allows
# it, or that has systemd, may still have it running, so it is stopped here.
disable_fb_service() {
  if command -v systemctl >/dev/null 2>&1; then
    if [ -d /run/systemd/system ]; then
      "${as_root[@]}" systemctl disable --now "$fb_service.service" >/dev/null 2>&1 || true
    else
      "${as_root[@]}" systemctl disable "$fb_service.service" >/dev/null 2>&1 || true
    fi
  fi
  if [ -x "/etc/init.d/$fb_service" ]; then
    "${as_root[@]}" update-rc.d "$fb_service" disable >/dev/null 2>&1 || true
    if "/etc/init.d/$fb_service" status >/dev/null 2>&1; then
      "${as_root[@]}" "/etc/init.d/$fb_service" stop >/dev/null ||
        echo "install-deps: could not stop the $fb_service service (port 3050)" >&2
    fi
  fi
}

echo "install-deps: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env "${install_env[@]}" \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
if [[ " ${missing[*]} " == *" $fb_server_package "* ]]; then
  disable_fb_service
fi
