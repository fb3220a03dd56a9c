# tests/abi/check_symbols.sh LIBRARY LIST -- the symbols libsqlq exports are
# exactly those of LIST (tests/abi/symbols.txt, one a line, sorted), so that
# adding or removing a public symbol is a change made on purpose, in the
# list, together with include/sqlq.h and docs/api.md.
#
# LIBRARY is libsqlq.so (its dynamic symbol table) or libsqlq.a (its global
# symbols, less the library's internal sqlq__ ones, which the shared
# library hides).  Either way, no global symbol may be outside the sqlq_
# prefix: an application linking libsqlq must find none of its own names
# taken.
set -u
lib=$1 list=$2

case $lib in
*.so | *.so.*) got=$(nm -D --defined-only "$lib") ;;
*) got=$(nm -g --defined-only "$lib" 2>/dev/null) ;;
esac
# Not the library's own: the linker's markers (_edata, _end, __bss_start)
# and what a sanitizer build adds (AddressSanitizer's __odr_asan.NAME beside
# each global, the sanitizers' and libFuzzer's coverage hooks).
got=$(printf '%s\n' "$got" |
  awk 'NF == 3 && $3 !~ /^(_edata|_end|__bss_start|__odr_asan|__asan|__ubsan|__sanitizer|__sancov)/ {print $3}')
[ -n "$got" ] || { echo "no symbols read from $lib" >&2; exit 1; }

status=0
outside=$(printf '%s\n' "$got" | grep -v '^sqlq_')
if [ -n "$outside" ]; then
  echo "$lib exports symbols outside the sqlq_ prefix:" >&2
  printf '  %s\n' $outside >&2
  status=1
fi
public=$(printf '%s\n' "$got" | grep '^sqlq_' | grep -v '^sqlq__' | LC_ALL=C sort -u)
if ! diff -u "$list" <(printf '%s\n' "$public") >&2; then
  echo "the public symbols of $lib differ from $list (- listed only, + exported only):" \
    "update the list with include/sqlq.h and docs/api.md if the change is meant" >&2
  status=1
fi
[ "$status" = 0 ] && echo "ok: $(printf '%s\n' "$public" | wc -l) public symbols, all listed"
exit "$status"
