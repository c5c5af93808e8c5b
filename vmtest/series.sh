#!/usr/bin/env bash
# What a PATCHES= selection means.
#
#   vmtest/series.sh drivers SELECTION            series, in apply order
#   vmtest/series.sh applied SELECTION PATCHDIR   those with patches: "xdp+veth+tun",
#                                                 or "none" when nothing applies
#   vmtest/series.sh files   SELECTION PATCHDIR   the patch files, one a line
#   vmtest/series.sh hash    SELECTION PATCHDIR   hash of names and contents
#
# SELECTION: none, all (xdp veth tun macb), or series separated by commas or
# spaces. A series another one is built on comes with it, first and once:
# veth and tun need xdp (the core helper both use), so PATCHES=veth applies
# xdp then veth ("xdp+veth"); macb needs nothing. A series directory that
# does not exist or holds no *.patch simply has nothing to apply. Cover
# letters (0000-cover-letter.patch) are skipped.
set -euo pipefail
. "$(dirname "$0")/common.sh"

known=(xdp veth tun macb)
# What each series is built on, applied before it.
declare -A needs=([veth]=xdp [tun]=xdp)

drivers() {
	local sel=${1:-all} d out=() pre=() want=()
	case "$sel" in
	none | "") return 0 ;;
	all) sel=${known[*]} ;;
	esac
	for d in ${sel//,/ }; do
		case " ${known[*]} " in
		*" $d "*) want+=("$d") ;;
		*) die "unknown patch series '$d' in PATCHES=$sel" "use PATCHES=none, all, or a list of: ${known[*]}" ;;
		esac
		[ -z "${needs[$d]:-}" ] || pre+=("${needs[$d]}")
	done
	# The prerequisites first, then the selection in its order, each once.
	for d in "${pre[@]}" "${want[@]}"; do
		case " ${out[*]} " in
		*" $d "*) ;;
		*) out+=("$d") ;;
		esac
	done
	echo "${out[*]}"
}

files() {
	local d p
	for d in $(drivers "$1"); do
		[ -d "$2/$d" ] || continue
		for p in "$2/$d"/*.patch; do
			[ -f "$p" ] || continue
			case "$(basename "$p")" in *cover-letter*) continue ;; esac
			echo "$p"
		done
	done
}

applied() {
	local d out=()
	for d in $(drivers "$1"); do
		[ -z "$(files "$d" "$2")" ] || out+=("$d")
	done
	if [ ${#out[@]} -eq 0 ]; then echo none; else (IFS=+; echo "${out[*]}"); fi
}

hash() {
	local p
	files "$1" "$2" | while IFS= read -r p; do
		printf '%s\n' "${p#"$2"/}"
		cat "$p"
	done | hash_stream
}

case "${1:-}" in
drivers) drivers "${2:-all}" ;;
files) files "${2:-all}" "${3:?PATCHDIR}" ;;
applied) applied "${2:-all}" "${3:?PATCHDIR}" ;;
hash) hash "${2:-all}" "${3:?PATCHDIR}" ;;
*) die "usage: vmtest/series.sh drivers|files|applied|hash SELECTION [PATCHDIR]" ;;
esac
