#!/usr/bin/env bash
# The kernel's own XDP / veth / tun / vhost-net selftests in the vmtest guest
# (vmtest/README.md, "The kernel's selftests").
#
#   vmtest/kselftest.sh run        build the kernel and its selftests, run them
#   vmtest/kselftest.sh compare    the same on stock and with the series, and
#                                  the difference of the two result lists; a
#                                  test that passes on stock and fails with
#                                  the series is a regression and fails it
#
#   PATCHES, KERNEL_SRC, DEBUG, RT, FAULT   as for make vmtest. compare runs
#                  PATCHES=none against PATCHES (default all), or, with
#                  KERNEL_SRC, KSELFTEST_STOCK_SRC against KERNEL_SRC
#   KSELFTEST      globs of test names (default: all; names in
#                  vmtest/kselftest-guest.sh)
#   KSELFTEST_BASELINE  (run) a stock run's result list: a test that failed
#                  there too is reported but does not fail the run
#   KSELFTEST_RETRIES  runs of a failing test after the first (default 1); a
#                  test that passes on one of them is FLAKY, not FAIL
#   KSELFTEST_REPEAT   run every selected test this many times, and count
#                  its failures (FLAKY: some failed)
#
# Result lists ("PASS|FAIL|SKIP|FLAKY <name>[: <reason>]") are kept in
# <cache>/kselftest/results/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

mode=${1:-run}
cache=$(cache_dir)
resdir=$cache/kselftest/results
mkdir -p "$resdir"
stamp=$(date -u +%Y%m%dT%H%M%S)-$$
# About 60 tests under TCG; KASAN and lockdep take longer.
export VMTEST_TIMEOUT=${VMTEST_TIMEOUT:-$([ "${DEBUG:-0}${RT:-0}" = 00 ] && echo 5400 || echo 10800)}
[ "${DEBUG:-0}" = 0 ] || export VMTEST_MEM=${VMTEST_MEM:-4096}

label() {
	if [ -n "${KERNEL_SRC:-}" ]; then echo "$KERNEL_SRC"; else echo "Linux 6.12 PATCHES=${PATCHES:-all}"; fi
}

# one RESULTS: build and run with the settings in the environment, the result
# lines to RESULTS. Status: vmtest's verdict (with KSELFTEST_ALWAYS_ZERO=1
# failed tests do not count: only a kernel splat, a timeout or a build).
one() {
	local results=$1 tmp out rc globs=()
	# The globs reach the guest's bash -c quoted: it must not expand them.
	read -ra globs <<<"${KSELFTEST:-}"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/xdplab-kselftest.XXXXXX")
	out=$("$VMTEST_DIR/kselftest-build.sh" "$tmp") || { rm -rf "$tmp"; return 2; }
	# The GEM board (ARCH=arm64) has its own runner; boot.sh puts its tests
	# into the initramfs and serves the host's xdp_features tester.
	local image=$tmp/bzImage runner=kselftest-guest.sh
	if [ "$(norm_arch "${VMTEST_ARCH:-x86_64}")" = arm64 ]; then
		image=$tmp/Image runner=kselftest-gem.sh
		export VMTEST_GEM_FILES=$out/guest VMTEST_GEM_TESTER=$out/host/xdp_features
		out=$out/guest
	fi
	log "running the kernel's selftests on $(label)"
	set +e
	CMD="KSELFTEST_ALWAYS_ZERO=${KSELFTEST_ALWAYS_ZERO:-0} KSELFTEST_RETRIES=${KSELFTEST_RETRIES:-1} KSELFTEST_REPEAT=${KSELFTEST_REPEAT:-1} $VMTEST_DIR/$runner $out$([ ${#globs[@]} -eq 0 ] || printf ' %q' "${globs[@]}")" \
		"$VMTEST_DIR/boot.sh" --label "$(label) (kselftest)" "$image" | tee "$tmp/guest.out"
	rc=${PIPESTATUS[0]}
	set -e
	# A kernel line may have been printed into the middle of a result line.
	grep -oE 'KSELFTEST (PASS|FAIL|SKIP|FLAKY) .*' "$tmp/guest.out" | sed 's/^KSELFTEST //' >"$results" || true
	rm -rf "$tmp"
	log "results: $results"
	return "$rc"
}

# verdicts FILE: "<status> <name>" per test.
verdicts() { awk '{ n = $2; sub(/:$/, "", n); print $1, n }' "$1"; }

case "$mode" in
run)
	results=$resdir/$stamp-$(label | tr -c 'A-Za-z0-9=.+\n-' _).txt
	base=${KSELFTEST_BASELINE:-}
	[ -z "$base" ] || [ -r "$base" ] || die "KSELFTEST_BASELINE=$base: no such file" "give the result list of a stock run"
	[ -z "$base" ] || export KSELFTEST_ALWAYS_ZERO=1
	rc=0
	one "$results" || rc=$?
	[ -s "$results" ] || die "the guest reported no results (console log above)"
	[ -n "$base" ] || exit "$rc"
	[ "$rc" = 0 ] || die "vmtest failed: a kernel splat or a timeout (above)"
	known=$(awk 'NR == FNR { if ($1 == "FAIL") f[$2] = 1; next } $1 == "FAIL" && ($2 in f) { print $2 }' \
		<(verdicts "$base") <(verdicts "$results") | paste -sd' ' -)
	new=$(awk 'NR == FNR { if ($1 == "FAIL") f[$2] = 1; next } $1 == "FAIL" && !($2 in f) { print $2 }' \
		<(verdicts "$base") <(verdicts "$results") | paste -sd' ' -)
	flaky=$(awk '$1 == "FLAKY" { print $2 }' <(verdicts "$results") | paste -sd' ' -)
	[ -z "$known" ] || log "failed on stock too ($base): $known"
	[ -z "$flaky" ] || log "flaky here (failed, then passed when run again): $flaky"
	[ -z "$new" ] || die "REGRESSION: failed here, not on stock: $new"
	log "PASS: no test failed that did not fail on stock"
	;;
compare)
	if [ -n "${KERNEL_SRC:-}" ]; then
		[ -n "${KSELFTEST_STOCK_SRC:-}" ] || die "compare with KERNEL_SRC needs the stock tree too" \
			"give KSELFTEST_STOCK_SRC=<pristine tree> (e.g. a worktree at the pristine commit)"
		stock=(KERNEL_SRC="$KSELFTEST_STOCK_SRC" PATCHES=none) patched=(KERNEL_SRC="$KERNEL_SRC" PATCHES=none)
	else
		sel=${PATCHES:-all}
		[ "$sel" != none ] || die "compare runs stock against a series; PATCHES=none is stock itself" "use PATCHES=all or a list"
		stock=(PATCHES=none) patched=(PATCHES="$sel")
	fi
	sres=$resdir/$stamp-stock.txt pres=$resdir/$stamp-patched.txt
	export KSELFTEST_ALWAYS_ZERO=1
	bad=()
	env "${stock[@]}" "$0" one "$sres" || bad+=("the stock run failed (kernel splat, timeout or build; above)")
	env "${patched[@]}" "$0" one "$pres" || bad+=("the patched run failed (kernel splat, timeout or build; above)")
	echo "== kselftest: stock ($(env "${stock[@]}" "$0" label)) against patched ($(env "${patched[@]}" "$0" label))"
	for f in "$sres" "$pres"; do
		printf '%-8s %s passed, %s failed, %s skipped, %s flaky\n' "$([ "$f" = "$sres" ] && echo stock || echo patched)" \
			"$(grep -c '^PASS' "$f")" "$(grep -c '^FAIL' "$f")" "$(grep -c '^SKIP' "$f")" "$(grep -c '^FLAKY' "$f")"
	done
	# Every test whose verdict differs, or that ran on one side only.
	diffs=$(join -a1 -a2 -e - -o 0,1.2,2.2 \
		<(verdicts "$sres" | awk '{print $2, $1}' | sort) <(verdicts "$pres" | awk '{print $2, $1}' | sort) |
		awk '$2 != $3')
	if [ -z "$diffs" ]; then
		echo "no difference: every test has the same verdict on both kernels"
	else
		echo "differences (test, stock, patched):"
		echo "$diffs" | sed 's/^/  /'
	fi
	# Passing on stock includes passing there on a rerun (FLAKY).
	reg=$(echo "$diffs" | awk '($2 == "PASS" || $2 == "FLAKY") && $3 == "FAIL" { print $1 }' | paste -sd' ' -)
	[ -z "$reg" ] || bad+=("REGRESSION: passes on stock, fails with the series: $reg")
	# Tests that failed some runs only: how often, on each side.
	grep -H '^FLAKY' "$sres" "$pres" | sed -e "s|^$sres:|  stock:   |" -e "s|^$pres:|  patched: |" || true
	echo "result lists: $sres $pres"
	if [ ${#bad[@]} -gt 0 ]; then
		for b in "${bad[@]}"; do log "$b"; done
		die "kselftest compare: FAIL"
	fi
	log "kselftest compare: PASS (no regression)"
	;;
one) one "$2" ;;
label) label ;;
*) die "usage: vmtest/kselftest.sh run|compare" ;;
esac
