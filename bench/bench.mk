# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#
# The bench: bench/*.c + lib/ -> build/xdplab-bench, included at the end of
# the top-level Makefile.
#
#   make bench                          every scenario, full mode (~15 min)
#   make bench QUICK=1                  quick mode (under 3 min)
#   make bench SCENARIOS='veth-tcp prog-cost'
#   make bench BENCHARGS='-p veth-tcp/mtu8000/* -r 10'
#
# Needs root. Tables go to stdout, results to bench/results/DATE-TIME/.

BENCH_OBJS := $(patsubst bench/%.c,$(OUT)/bench/%.o,$(wildcard bench/*.c))
BENCH_DEPS_STAMP := $(OUT)/.deps-bench

.PHONY: bench bench-build

all: $(OUT)/xdplab-bench

$(OUT)/xdplab-bench: $(BENCH_OBJS) $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -lm -o $@

# gnuplot for the plots, on top of the base packages.
# The stamp may not be writable (a read-only tree over 9p in the vmtest
# guest): then the check just runs again next time.
$(BENCH_DEPS_STAMP): scripts/deps.sh | $(DEPS_STAMP)
	$(Q)scripts/deps.sh base bench
	$(Q)touch $@ 2>/dev/null || true

bench-build: all $(OUT)/xdplab-bench

bench: bench-build $(BENCH_DEPS_STAMP)
	$(OUT)/xdplab-bench $(if $(filter-out 0,$(QUICK)),--quick) $(BENCHARGS) $(SCENARIOS)

# The QEMU plugin behind bench/insn_profile.sh: a shared object QEMU
# loads, not part of xdplab-bench, so it is only built when asked for.
$(OUT)/bench/tb_insns.so: bench/tcg/tb_insns.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden -o $@ $<

# bench/cache_model.sh's cache model (issue 19), and the x86 build of the
# window mark it snapshots at (same address as the board's, below).
$(OUT)/bench/cache_model.so: bench/tcg/cache_model.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -o $@ $<

# (under `make arm64` OUT is build/arm64, whose insns_mark is the rule below)
ifneq ($(OUT),build/arm64)
$(OUT)/bench/insns_mark: bench/tcg/insns_mark.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -static -no-pie \
		-Wl,--section-start=xdplab_mark=$(INSNS_MARK_ADDR) -o $@ $<
endif

# bench/gem-insns.sh's window marks: a program for the board's guest whose
# insns_mark() sits at a fixed address, which the plugin is told. Static,
# so it does not depend on the guest's libc.
INSNS_MARK_ADDR := 0x5a5a0000
build/arm64/bench/insns_mark: bench/tcg/insns_mark.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(ARM64_CC) -O2 -Wall -Wextra -static -no-pie \
		-Wl,--section-start=xdplab_mark=$(INSNS_MARK_ADDR) -o $@ $<

.PHONY: print-insns-mark-addr
print-insns-mark-addr:
	@echo $(INSNS_MARK_ADDR)

-include $(BENCH_OBJS:.o=.d)
