# tests/python/install.sh PYTHON PACKAGE_DIR -- the Python package installs
# offline into a fresh venv with the command docs/python.md gives,
#   python3 -m venv ENV && ENV/bin/pip install bindings/python
# (PIP_NO_INDEX=1 makes any attempt to reach an index fail instead of
# succeeding where the network happens to be up), then imports from the venv,
# outside the tree, and runs a job through the library of $SQLQ_LIBRARY.
set -euo pipefail
python=$1 package=$2
dir=$(mktemp -d /tmp/sqlq-python-install.XXXXXX)
trap 'rm -rf "$dir"' EXIT
# pip builds in the source tree; a copy keeps the tree as it was.
cp -r "$package" "$dir/src"
"$python" -m venv "$dir/venv"
cd "$dir"
PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "$dir/venv/bin/pip" install "$dir/src" \
  >"$dir/pip.log" 2>&1 || { cat "$dir/pip.log" >&2; exit 1; }
env -u PYTHONPATH "$dir/venv/bin/python" - "$dir/q.db" <<'PY'
import sys
import sqlq

assert sqlq.__file__.startswith(sys.prefix), sqlq.__file__
with sqlq.open("sqlite:" + sys.argv[1]) as db:
    db.init()
    db.enqueue("install", b"ok")
    job = db.claim("install")[0]
    job.ack()
    print(f"ok: sqlq {sqlq.__version__} from {sqlq.__file__}, libsqlq {sqlq.version()}")
PY
# Without the library, the import says what to install.
if out=$(env -u PYTHONPATH SQLQ_LIBRARY="$dir/no-such-libsqlq.so.1" "$dir/venv/bin/python" \
  -c 'import sqlq' 2>&1); then
  echo "import sqlq succeeded without libsqlq" >&2
  exit 1
fi
grep -q "SQLQ_LIBRARY" <<<"$out" || { echo "unclear message: $out" >&2; exit 1; }
echo "ok: without libsqlq: $(tail -1 <<<"$out")"
