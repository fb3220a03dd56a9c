#!/usr/bin/env bash
# scripts/format.sh -- format the C code with .clang-format, in place.
#   scripts/format.sh [--check] [CLANG_FORMAT]
# With --check, change nothing: print where a file differs from the style
# and exit 1 (the test style_format runs this).  CLANG_FORMAT defaults to
# clang-format-14, else clang-format.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=(-i)
if [ "${1:-}" = --check ]; then
  mode=(--dry-run --Werror)
  shift
fi
tool=${1:-$(command -v clang-format-14 || command -v clang-format)}
if git rev-parse --git-dir >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- 'include/*.h' 'src/*.[ch]' 'tests/*.[ch]')
else
  mapfile -t files < <(find include src tests -name '*.[ch]' | sort)
fi
[ "${#files[@]}" -gt 0 ] || { echo "format.sh: no C files found" >&2; exit 70; }
"$tool" "${mode[@]}" "${files[@]}"
