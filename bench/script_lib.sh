# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What bench/'s kernel-comparing scripts share; sourced after `me=NAME`.

# One line naming the cause, one with a hint, exit 2.
die() { echo "$me: $1" >&2; [ -z "${2:-}" ] || echo "$me: $2" >&2; exit 2; }

# --help: the script's header comment, from its third line to `set -e`.
usage() { sed -n '3,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d'; exit 0; }

# The two kernels of a stock-against-patched script: --stock IMAGE and
# --patched IMAGE set $stock and $patched. Call with the option and its
# argument count left ($#) and value: kernel_opt "$1" $# "${2:-}".
kernel_opt() {
	[ "$2" -ge 2 ] || die "$1 wants a bzImage"
	case "$1" in
	--stock) stock=$3 ;;
	--patched) patched=$3 ;;
	esac
}
