#!/usr/bin/env bash
# The GEM board's control service, one request per connection: lets the
# guest ask the host for what only the emulator can do to its GEM, through
# the board's QMP socket. vmtest/boot.sh runs it under socat in the board's
# network namespace, on the peer's address; stdin and stdout are the
# guest's TCP connection (XDPLAB_GEM_CONTROL in the guest).
#
#   vmtest/gem-control.sh QMP_SOCKET GEM_QOM_PATH NETDEV_ID
#
# The guest sends one line; the answer is one line, "ok ..." or
# "error: ...", and the connection closes:
#
#   hresp          raise a DMA bus error (HRESP) on the GEM's queue 0
#                  (vmtest/qemu/0003-*.patch): "ok hresp <n>", n the
#                  errors delivered since the boot; "error: ..." when the
#                  GEM has the interrupt masked (nothing was injected)
#   hresp-count    "ok hresp-count <n>"
#   txerr          raise a TX error (AMBA error, ISR bit 6) on the GEM's
#                  queue 0 (vmtest/qemu/0004-*.patch): "ok txerr <n>";
#                  "error: ..." while the driver masks it, as macb does
#                  until its TX error task is done
#   txerr-count    "ok txerr-count <n>"
#   link down      QMP set_link on the GEM's netdev: the emulated PHY's
#   link up        link (and QEMU stops passing frames while down); what
#                  the guest sees depends on its DT (fixed link: nothing)
#   flap MS        link down, MS milliseconds (1-60000), link up: the
#                  timing is the host's, not the guest's
#   stopped        "ok stopped 0|1": whether the GEM's DMA is stopped by
#                  an injected bus error (until the driver clears TE/RE)
#   after MS REQ   any of the above, MS milliseconds (1-60000) after the
#                  request came: for a guest that cannot talk to the host
#                  when it happens (its RX held, say); the answer comes
#                  once it is done
set -euo pipefail

[ $# -eq 3 ] || { echo "error: usage: vmtest/gem-control.sh QMP_SOCKET GEM_QOM_PATH NETDEV_ID"; exit 2; }
sock=$1 gem=$2 netdev=$3

read -r -t 30 what arg rest || { echo "error: no request within 30 s"; exit 2; }
ms() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 60000 ]; }
if [ "$what" = after ]; then
	ms "$arg" || { echo "error: after takes milliseconds, 1 to 60000"; exit 2; }
	delay=$arg
	read -r what arg rest <<<"${rest:-}"
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
fi
[ -z "${rest:-}" ] || { echo "error: trailing words in '$what $arg $rest'"; exit 2; }

# One QMP session for the request: QEMU's greeting, qmp_capabilities, then
# the commands in turn; each answer is the next line holding "return" or
# "error" (events come as lines of their own and are skipped).
coproc QMP { exec socat -t 5 - UNIX-CONNECT:"$sock" 2>&1; }
qmp_in=${QMP[1]} qmp_out=${QMP[0]}
trap 'exec {qmp_in}>&- 2>/dev/null || true; kill "$QMP_PID" 2>/dev/null || true' EXIT
reply=""
qmp() {
	local line
	printf '%s\n' "$1" >&"$qmp_in"
	while IFS= read -r -t 10 line <&"$qmp_out"; do
		case "$line" in
		*'"return"'* | *'"error"'*) reply=$line; return 0 ;;
		esac
	done
	reply='{"error": {"desc": "no answer from QMP within 10 s"}}'
}
# The error's "desc", else the whole line
qmp_err() {
	local d=${reply#*\"desc\": \"}
	[ "$d" != "$reply" ] && d=${d%%\"*}
	echo "error: $d"
}
qmp_ok() { case "$reply" in *'"return"'*) return 0 ;; *) return 1 ;; esac; }
# The value of a qom-get's "return"
qmp_value() { local v=${reply#*\"return\": }; echo "${v%\}*}" | tr -d ' '; }

IFS= read -r -t 10 greeting <&"$qmp_out" || { echo "error: no QMP greeting from $sock"; exit 1; }
qmp '{"execute": "qmp_capabilities"}'
qmp_ok || { qmp_err; exit 1; }

set_link() {
	qmp "{\"execute\": \"set_link\", \"arguments\": {\"name\": \"$netdev\", \"up\": $1}}"
	qmp_ok || { qmp_err; exit 1; }
}
count() {
	qmp "{\"execute\": \"qom-get\", \"arguments\": {\"path\": \"$gem\", \"property\": \"${1:-hresp}-count\"}}"
	qmp_ok || { qmp_err; exit 1; }
	qmp_value
}

case "$what ${arg:-}" in
"hresp ")
	qmp "{\"execute\": \"qom-set\", \"arguments\": {\"path\": \"$gem\", \"property\": \"inject-hresp\", \"value\": true}}"
	qmp_ok || { qmp_err; exit 1; }
	echo "ok hresp $(count)" ;;
"hresp-count ")
	echo "ok hresp-count $(count)" ;;
"txerr ")
	qmp "{\"execute\": \"qom-set\", \"arguments\": {\"path\": \"$gem\", \"property\": \"inject-txerr\", \"value\": true}}"
	qmp_ok || { qmp_err; exit 1; }
	echo "ok txerr $(count txerr)" ;;
"txerr-count ")
	echo "ok txerr-count $(count txerr)" ;;
"stopped ")
	qmp "{\"execute\": \"qom-get\", \"arguments\": {\"path\": \"$gem\", \"property\": \"inject-hresp\"}}"
	qmp_ok || { qmp_err; exit 1; }
	case "$(qmp_value)" in true) echo "ok stopped 1" ;; *) echo "ok stopped 0" ;; esac ;;
"link down")
	set_link false
	echo "ok link down" ;;
"link up")
	set_link true
	echo "ok link up" ;;
flap\ *)
	ms "$arg" || { echo "error: flap takes milliseconds, 1 to 60000"; exit 2; }
	set_link false
	sleep "$(printf '%d.%03d' $((arg / 1000)) $((arg % 1000)))"
	set_link true
	echo "ok flap $arg" ;;
*)
	echo "error: unknown request '$what${arg:+ $arg}'; expected hresp, hresp-count, txerr, txerr-count, stopped, link down, link up, flap MS or after MS <request>"
	exit 2 ;;
esac
