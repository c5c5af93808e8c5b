#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Memory the page pools of a tap hold (kernel-patches/tun), per queue.

    bench/tun_pool_footprint.py [--queues 1,8] [--frames 4096] [--size 1500]
                                [--xdp none,pass]

Run as root on a kernel with the tun series (in the vmtest guest:
make vmtest CMD="bench/tun_pool_footprint.py"). For each queue count, in a
namespace of its own: a multi-queue tap (IFF_TAP | IFF_NO_PI, O_NONBLOCK,
so written frames take tun_build_skb()), with no program or with xdplab's
XDP_PASS frags program attached (--xdp: since v5 of the series a queue
has a pool only while a program is attached), then the netdev
netlink family's page-pool-get for its pools at three moments: just
attached (idle); after --frames frames of --size bytes written to every
queue that nobody receives (each frame's page comes back at once); after
as many again that a UDP socket receives and does not read (their pages
stay out); once the socket is closed (the pages come back to the pools'
rings); and 3 s later. A pool's inflight-mem counts every
page it took from the page allocator and has not given back, whether out
in an skb or waiting in its ring or cache: what the queue holds.
"""
import argparse
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TAP, IFF_NO_PI, IFF_MULTI_QUEUE = 0x0002, 0x1000, 0x0100


def ynl(args, ksrc):
    cli = os.path.join(ksrc, "tools/net/ynl/cli.py")
    spec = os.path.join(ksrc, "Documentation/netlink/specs/netdev.yaml")
    out = subprocess.run([sys.executable, cli, "--spec", spec, "--no-schema", "--output-json"] + args,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []


def pools_of(ifindex, ksrc):
    pools = [p for p in ynl(["--dump", "page-pool-get"], ksrc) if p.get("ifindex") == ifindex]
    return len(pools), sum(p.get("inflight", 0) for p in pools), \
        sum(p.get("inflight-mem", 0) for p in pools)


def ip_csum(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(size):
    # Ethernet broadcast, IPv4 UDP 198.18.0.2:4242 -> 198.18.0.1:9.
    ip_len = size - 14
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, 0, 0, 64, 17, 0,
                     bytes([198, 18, 0, 2]), bytes([198, 18, 0, 1]))
    ip = ip[:10] + struct.pack("!H", ip_csum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 4242, 9, ip_len - 20, 0)
    return b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x02" + b"\x08\x00" + ip + udp + \
        bytes(size - 14 - 28)


XDPLAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "xdplab")


def measure(nq, frames, size, ksrc, xdp):
    fds = []
    for _ in range(nq):
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
        fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"xfoot0",
                                               IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE))
        fds.append(fd)
    subprocess.run(["ip", "link", "set", "xfoot0", "up"], check=True)
    subprocess.run(["ip", "addr", "add", "198.18.0.1/24", "dev", "xfoot0"], check=True)
    ifindex = int(open("/sys/class/net/xfoot0/ifindex").read())
    if xdp == "pass":
        subprocess.run([XDPLAB, "pass", "xfoot0", "--frags", "--keep", "-q", "-d", "1"],
                       check=True, capture_output=True)
    rows = [("attached", pools_of(ifindex, ksrc))]
    f = frame(size)

    def burst():
        for _ in range(frames):
            for fd in fds:
                try:
                    os.write(fd, f)
                except BlockingIOError:
                    pass
    # Nobody listens: every frame is freed as soon as the stack saw it.
    burst()
    rows.append(("%d frames a queue, none kept" % frames, pools_of(ifindex, ksrc)))
    # A socket that does not read keeps them (up to its buffer).
    sk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sk.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE
    sk.bind(("198.18.0.1", 9))
    burst()
    rows.append(("%d frames a queue, kept by a socket" % frames, pools_of(ifindex, ksrc)))
    sk.close()
    rows.append(("socket closed", pools_of(ifindex, ksrc)))
    time.sleep(3)
    rows.append(("3 s later", pools_of(ifindex, ksrc)))
    for fd in fds:
        os.close(fd)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queues", default="1,8")
    ap.add_argument("--frames", type=int, default=4096)
    ap.add_argument("--size", type=int, default=1500)
    ap.add_argument("--xdp", default="none,pass",
                    help="none, pass (an XDP_PASS frags program), or both, comma-separated")
    ap.add_argument("--ksrc", default=os.environ.get("XDPLAB_KSRC", "/root/ksrc/tun"),
                    help="kernel tree with tools/net/ynl (default $XDPLAB_KSRC)")
    ap.add_argument("--measure", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure:
        print(json.dumps(measure(a.measure, a.frames, a.size, a.ksrc, a.xdp)))
        return
    if not os.path.exists(os.path.join(a.ksrc, "tools/net/ynl/cli.py")):
        sys.exit("tun_pool_footprint: no tools/net/ynl/cli.py under %s; "
                 "give --ksrc a kernel tree" % a.ksrc)
    print("command: %s" % " ".join(sys.argv))
    print("| program | queues | moment | pools | pages held | MB held | MB a queue |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for xdp, nq in ((x, int(q)) for x in a.xdp.split(",") for q in a.queues.split(",")):
        ns = "xfoot%d" % os.getpid()
        subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            p = subprocess.run(["ip", "netns", "exec", ns, sys.executable, __file__,
                                "--ksrc", a.ksrc, "--frames", str(a.frames),
                                "--size", str(a.size), "--xdp", xdp, "--measure", str(nq)],
                               capture_output=True, text=True)
            if p.returncode:
                sys.exit("tun_pool_footprint: %s, %d queues: %s" % (xdp, nq, p.stderr.strip()))
            out = p.stdout
            for moment, (npools, pages, mem) in json.loads(out):
                print("| %s | %d | %s | %d | %d | %.2f | %.2f |" %
                      (xdp, nq, moment, npools, pages, mem / 2**20, mem / 2**20 / nq))
        finally:
            subprocess.run(["ip", "netns", "del", ns])


if __name__ == "__main__":
    main()
