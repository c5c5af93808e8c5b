# shellcheck shell=bash
# Sourced by the guest runners, vmtest/kselftest-guest.sh (x86) and
# vmtest/kselftest-gem.sh (the GEM board): selecting tests by name, running
# one again while it fails, and its one line,
#
#   KSELFTEST PASS|FAIL|SKIP|FLAKY <name>[: <reason>]
#
# A runner sets globs=(...) (the name patterns), runs each test as
# `try NAME FUNCTION ARGS...`, where FUNCTION runs it once and says what it
# found with `result STATUS [REASON]`, and ends with `finish WHO`.
#
# A test that fails runs again, up to KSELFTEST_RETRIES times (default 1):
# one that then passes is FLAKY, with how many runs failed and why the
# first did, and is no failure. KSELFTEST_REPEAT=N runs every selected test
# N times whatever it does and counts its failures (how often does it race,
# here and on stock: `make kselftest-compare KSELFTEST=... KSELFTEST_REPEAT=300`).

RETRIES=${KSELFTEST_RETRIES:-1}
REPEAT=${KSELFTEST_REPEAT:-1}

passed=0 failed=0 skipped=0 flaky=0
# report STATUS NAME [REASON]: a test's line, counted.
report() {
	local st=$1 name=$2 why=${3:-}
	echo "KSELFTEST $st $name${why:+: $why}"
	case "$st" in
	PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;;
	SKIP) skipped=$((skipped + 1)) ;; FLAKY) flaky=$((flaky + 1)) ;;
	esac
}
# result STATUS [REASON]: what one run of the current test found.
result() { r_st=$1 r_why=${2:-}; }
# try NAME FUNCTION ARGS...: run a selected test, again while it fails (up
# to RETRIES more times), and report it.
try() {
	local name=$1 n=0 first=""
	shift
	selected "$name" || return 0
	[ "$REPEAT" -le 1 ] || { repeat "$name" "$@"; return; }
	while :; do
		n=$((n + 1))
		r_st=FAIL r_why="no verdict"
		"$@"
		if [ "$r_st" != FAIL ] || [ "$n" -gt "$RETRIES" ]; then break; fi
		first=${first:-$r_why}
		echo "kselftest: $name failed (run $n: $r_why); running it again"
	done
	if [ "$n" = 1 ]; then
		report "$r_st" "$name" "$r_why"
	elif [ "$r_st" = PASS ]; then
		report FLAKY "$name" "failed $((n - 1)) of $n runs; the first: $first"
	elif [ "$r_st" = FAIL ]; then
		report FAIL "$name" "$r_why (failed all $n runs)"
	else
		report "$r_st" "$name" "$r_why (run $n; run 1 failed: $first)"
	fi
}
# repeat NAME FUNCTION ARGS...: REPEAT runs of one test, one line for all.
repeat() {
	local name=$1 n fails=0 first=""
	shift
	for ((n = 1; n <= REPEAT; n++)); do
		r_st=FAIL r_why="no verdict"
		"$@" >/dev/null
		case "$r_st" in
		SKIP) report SKIP "$name" "$r_why (run $n of $REPEAT)"; return ;;
		FAIL) fails=$((fails + 1)); first=${first:-$r_why} ;;
		esac
	done
	if [ "$fails" = 0 ]; then
		report PASS "$name" "$REPEAT of $REPEAT runs passed"
	elif [ "$fails" = "$REPEAT" ]; then
		report FAIL "$name" "$first (failed all $REPEAT runs)"
	else
		report FLAKY "$name" "failed $fails of $REPEAT runs; the first: $first"
	fi
}
selected() {
	local g
	# shellcheck disable=SC2154 # globs: set by the runner
	for g in "${globs[@]}"; do
		# shellcheck disable=SC2053
		[[ "$1" == $g ]] && return 0
	done
	return 1
}
# A failed test's log on the console, so that the run's console.log keeps it.
show_log() { tail -n "${2:-40}" "$1" | sed 's/^/    | /'; }

# finish WHO: the closing counts. Status 1 when a test failed, or when no
# test had the names asked for; with KSELFTEST_ALWAYS_ZERO=1 (kselftest.sh
# compare and run against a baseline) only the latter: the verdict is the
# host's, from the result lines.
finish() {
	if [ $((passed + failed + skipped + flaky)) = 0 ]; then
		echo "$1: no test is named like ${globs[*]}"
		return 1
	fi
	echo "$passed passed, $failed failed, $skipped skipped, $flaky flaky"
	[ "$failed" = 0 ] || [ "${KSELFTEST_ALWAYS_ZERO:-0}" = 1 ]
}
