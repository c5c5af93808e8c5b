# vmtest: build Linux 6.12 with kernel-patches/ applied, boot it under QEMU
# with the host's / as a read-only 9p root, run a command inside. Included by
# the top-level Makefile; all the work is in vmtest/*.sh (see vmtest/README.md).
#
#   make vmtest                      build/test_xdplab in the guest
#   make vmtest CMD='uname -r; ip link'
#   make vmshell                     interactive guest (Ctrl-A x quits QEMU)
#   make vmkernel                    only build the kernel, print its path
#
#   PATCHES=none|all|veth,tun,macb   series to apply (default all)
#   KERNEL=6.12|debian-6.1|<image>   which kernel (default 6.12 from source)
#   DEBUG=1                          KASAN, lockdep, kmemleak, DEBUG_NET
#   KERNEL_SRC=<tree>  PATCHDIR=<dir>  XDPLAB_CACHE=<dir>  VMTEST_TIMEOUT=<s>
#   VMTEST_MEM=<MiB>  VMTEST_SMP=<n>  XDPLAB_KVM=auto|0|1  VMTEST_VERBOSE=1  V=1
#
# Variables given on the command line reach the scripts through the
# environment; ARCH is handed over explicitly because the Makefile sets it.

.PHONY: vmtest vmshell vmkernel vmtest-deps

vmtest-deps:
	@scripts/deps.sh vm

# The default command is the selftest runner, so build it first; with CMD=
# the userland is left alone (a kernel engineer may boot while it is broken).
vmtest: vmtest-deps $(if $(CMD),,all)
	@VMTEST_ARCH='$(ARCH)' vmtest/run.sh test

vmshell: vmtest-deps
	@VMTEST_ARCH='$(ARCH)' vmtest/run.sh shell

vmkernel: vmtest-deps
	@VMTEST_ARCH='$(ARCH)' vmtest/run.sh kernel
