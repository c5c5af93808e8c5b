# vmtest: build Linux 6.12 with kernel-patches/ applied, boot it under QEMU
# with the host's / as a read-only 9p root, run a command inside. Included by
# the top-level Makefile; all the work is in vmtest/*.sh (see vmtest/README.md).
#
#   make vmtest                      build/test_xdplab in the guest
#   make vmtest CMD='uname -r; ip link'
#   make vmshell                     interactive guest (Ctrl-A x quits QEMU)
#   make vmkernel                    only build the kernel, print its path
#   make vmtest ARCH=arm64           the emulated Cadence GEM board (QEMU
#                                    xlnx-versal-virt): build/arm64/ in the guest
#   make arm64                       only cross-build build/arm64/
#   make vmtest-rbof                 QEMU's riscv64 sifive_u GEM (RBOF=2):
#                                    multi-buffer frames byte for byte
#   make vmtest-zynq                 QEMU's 32-bit xilinx-zynq-a9 GEM: its open
#                                    under fail_page_alloc, lockdep on
#
#   PATCHES=none|all|veth,tun,macb   series to apply (default all: xdp,veth,tun,
#                                    macb; veth and tun bring xdp along)
#   KERNEL=6.12|debian-6.1|<image>   which kernel (default 6.12 from source)
#   DEBUG=1                          KASAN, lockdep, kmemleak, DEBUG_NET
#   RT=1                             PREEMPT_RT + lockdep + atomic-sleep checks
#   FAULT=1                          failslab, fail_page_alloc, fail_function
#   O2=1                             -O2 as distributions build (tinyconfig: -Os)
#                                    (DEBUG, RT, FAULT combine; 6.12 only)
#   KERNEL_SRC=<tree>  PATCHDIR=<dir>  XDPLAB_CACHE=<dir>  VMTEST_TIMEOUT=<s>
#   VMTEST_MEM=<MiB>  VMTEST_SMP=<n>  XDPLAB_KVM=auto|0|1  VMTEST_VERBOSE=1  V=1
#   VMTEST_SEED=0                    a new flavour's first build starts cold
#   VMTEST_GEM_QEMU=patched|system|<path>  the board's QEMU (default: Debian's
#                                    rebuilt with vmtest/qemu/*.patch, once)
#
# Variables given on the command line reach the scripts through the
# environment; ARCH is handed over explicitly because the Makefile sets it.

.PHONY: vmtest vmshell vmkernel vmtest-deps arm64 vmtest-rbof vmtest-zynq

vmtest-deps:
	@scripts/deps.sh $(if $(filter arm64 aarch64,$(ARCH)),vm-arm64,vm)

# The project cross-built for the GEM board, against the arm64 Debian
# packages vmtest/rootfs.sh unpacks (also the guest's initramfs).
ARM64_CC ?= aarch64-linux-gnu-gcc
arm64:
	@scripts/deps.sh vm-arm64
	@sysroot=$$(vmtest/rootfs.sh arm64)/root && \
	$(MAKE) --no-print-directory ARCH=arm64 CC=$(ARM64_CC) OUT=build/arm64 SYSROOT=$$sysroot all

# The default command is the selftest runner, so build it first; with CMD=
# the userland is left alone (a kernel engineer may boot while it is broken),
# except on the board, whose CMD nearly always runs build/arm64/.
VM_USERLAND := $(if $(filter arm64 aarch64,$(ARCH)),arm64,$(if $(CMD),,all))
vmtest: vmtest-deps $(VM_USERLAND)
	@VMTEST_ARCH='$(ARCH)' vmtest/run.sh test

# The one test the arm64 board cannot run: NET_IP_ALIGN is 0 there, 2 on
# riscv64, so only sifive_u's GEM gets a receive buffer offset. Its own
# riscv64 kernel (PATCHES=macb by default) and a static /init, no userland.
vmtest-rbof:
	@vmtest/gem-rbof.sh

# What only a 32-bit kernel shows: there u64_stats updates are seqcount
# writes, which lockdep checks for preemption. Its own arm kernel (PATCHES=macb
# by default; tinyconfig + arm.config), Debian's qemu-system-arm, a static
# /init (vmtest/gem-zynq-init.c).
vmtest-zynq:
	@vmtest/gem-zynq.sh

vmshell: vmtest-deps
	@VMTEST_ARCH='$(ARCH)' vmtest/run.sh shell

vmkernel: vmtest-deps
	@VMTEST_ARCH='$(ARCH)' vmtest/run.sh kernel

# The kernel's own XDP / veth / tun / vhost-net selftests, built from the
# tree the guest kernel is built from (vmtest/README.md, "The kernel's
# selftests"): one run, or stock against the series with the difference.
#   make kselftest [PATCHES=...] [KSELFTEST='net/* bpf/test_xdp_*']
#   make kselftest-compare [PATCHES=all]
.PHONY: kselftest kselftest-compare kselftest-deps
kselftest-deps:
	@scripts/deps.sh kselftest $(if $(filter arm64 aarch64,$(ARCH)),vm-arm64)
kselftest: kselftest-deps
	@VMTEST_ARCH='$(ARCH)' vmtest/kselftest.sh run
kselftest-compare: kselftest-deps
	@VMTEST_ARCH='$(ARCH)' vmtest/kselftest.sh compare
