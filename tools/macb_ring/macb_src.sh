# Sourced by the source checks here: $src is the macb driver of the kernel
# tree in $1; fn_body PATTERN prints, numbered "N: line", the function whose
# definition line starts "static int PATTERN(" (or void) up to its closing brace in
# column 0; first REGEX prints the number of the first body line matching.
src=${1:?usage: $0 KERNEL_TREE}/drivers/net/ethernet/cadence/macb_main.c
[ -r "$src" ] || { echo "$0: no $src (give a kernel tree with the macb series)" >&2; exit 2; }
fn_body() { awk -v fn="$1" '$0 ~ "^static (int|void) " fn "\\(" { on = 1 } on { print NR ": " $0 } on && /^}/ { exit }' "$src"; }
first() { echo "$body" | grep -E "$1" | head -1 | cut -d: -f1; }
