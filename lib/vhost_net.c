// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The vhost-net client of vhost_net.h. The mechanics (memory table, vring
 * addresses, kick and call eventfds, the backend) follow the vhost ioctl
 * ABI in <linux/vhost.h>; the ring is the split virtqueue of the virtio
 * spec, little-endian (VIRTIO_F_VERSION_1), with guest "physical"
 * addresses equal to this process's virtual ones (one memory region
 * mapped 1:1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/if_tun.h>
#include <linux/vhost.h>
#include <linux/virtio_config.h>

#include "vhost_net.h"

#define TX_VQ 1			/* vhost-net: 0 is RX, 1 is TX */
#define RING_ALIGN 4096

const char *vhost_net_unavailable(void)
{
	int fd;

	if (access("/dev/vhost-net", F_OK))
		return "no /dev/vhost-net (kernel without CONFIG_VHOST_NET)";
	fd = open("/dev/vhost-net", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return "/dev/vhost-net cannot be opened";
	close(fd);
	return NULL;
}

int vhost_net_tap_prepare(int tap_fd)
{
	int hdr = VHOST_NET_HDR_LEN, le = 1;

	if (ioctl(tap_fd, TUNSETVNETHDRSZ, &hdr))
		return -1;
	/* Little-endian is what VIRTIO_F_VERSION_1 means; x86 and arm64 tun
	 * assume it anyway, this makes it explicit where they would not.
	 */
	if (ioctl(tap_fd, TUNSETVNETLE, &le) && errno != EINVAL)
		return -1;
	return 0;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t ring_bytes(unsigned int num)
{
	size_t n = vring_size(num, RING_ALIGN);

	return (n + RING_ALIGN - 1) & ~(size_t)(RING_ALIGN - 1);
}

static inline uint8_t *slot_addr(const struct vhost_net *vn, unsigned int id)
{
	return (uint8_t *)vn->mem + ring_bytes(vn->num) + (size_t)id * vn->slot;
}

static int vq_setup(struct vhost_net *vn, int tap_fd)
{
	struct vhost_vring_state num = { .index = TX_VQ, .num = vn->num };
	struct vhost_vring_state base = { .index = TX_VQ, .num = 0 };
	struct vhost_vring_addr addr = {
		.index = TX_VQ,
		.desc_user_addr = (uint64_t)(uintptr_t)vn->vr.desc,
		.avail_user_addr = (uint64_t)(uintptr_t)vn->vr.avail,
		.used_user_addr = (uint64_t)(uintptr_t)vn->vr.used,
	};
	struct vhost_vring_file kick = { .index = TX_VQ, .fd = vn->kick };
	struct vhost_vring_file call = { .index = TX_VQ, .fd = vn->call };
	struct vhost_vring_file backend = { .index = TX_VQ, .fd = tap_fd };

	if (ioctl(vn->fd, VHOST_SET_VRING_NUM, &num) ||
	    ioctl(vn->fd, VHOST_SET_VRING_BASE, &base) ||
	    ioctl(vn->fd, VHOST_SET_VRING_ADDR, &addr) ||
	    ioctl(vn->fd, VHOST_SET_VRING_KICK, &kick) ||
	    ioctl(vn->fd, VHOST_SET_VRING_CALL, &call))
		return -1;
	return ioctl(vn->fd, VHOST_NET_SET_BACKEND, &backend);
}

int vhost_net_open(struct vhost_net *vn, int tap_fd, unsigned int num, size_t max_frame)
{
	struct vhost_memory *mt = NULL;
	uint64_t features;
	int err;

	memset(vn, 0, sizeof(*vn));
	vn->fd = vn->kick = vn->call = -1;
	if (!num || num > 32768 || (num & (num - 1)) || !max_frame || max_frame > 65536) {
		errno = EINVAL;
		return -1;
	}
	vn->num = num;
	vn->slot = (VHOST_NET_HDR_LEN + max_frame + 63) & ~(size_t)63;
	vn->mem_len = ring_bytes(num) + num * vn->slot;
	vn->mem = mmap(NULL, vn->mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (vn->mem == MAP_FAILED) {
		vn->mem = NULL;
		goto fail;
	}
	vring_init(&vn->vr, num, vn->mem, RING_ALIGN);
	vn->free_ids = calloc(num, sizeof(*vn->free_ids));
	if (!vn->free_ids)
		goto fail;
	for (unsigned int i = 0; i < num; i++)
		vn->free_ids[i] = num - 1 - i;
	vn->nfree = num;

	vn->fd = open("/dev/vhost-net", O_RDWR | O_CLOEXEC);
	vn->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vn->call = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vn->fd < 0 || vn->kick < 0 || vn->call < 0)
		goto fail;
	if (ioctl(vn->fd, VHOST_SET_OWNER) || ioctl(vn->fd, VHOST_GET_FEATURES, &features))
		goto fail;
	if (!(features & (1ULL << VIRTIO_F_VERSION_1))) {
		errno = EOPNOTSUPP;
		goto fail;
	}
	/* No VHOST_NET_F_VIRTIO_NET_HDR: the header goes to the tap as it is. */
	features = 1ULL << VIRTIO_F_VERSION_1;
	if (ioctl(vn->fd, VHOST_SET_FEATURES, &features))
		goto fail;

	mt = calloc(1, sizeof(*mt) + sizeof(mt->regions[0]));
	if (!mt)
		goto fail;
	mt->nregions = 1;
	mt->regions[0].guest_phys_addr = (uint64_t)(uintptr_t)vn->mem;
	mt->regions[0].userspace_addr = (uint64_t)(uintptr_t)vn->mem;
	mt->regions[0].memory_size = vn->mem_len;
	if (ioctl(vn->fd, VHOST_SET_MEM_TABLE, mt))
		goto fail;
	free(mt);
	mt = NULL;
	if (vq_setup(vn, tap_fd))
		goto fail;
	return 0;
fail:
	err = errno;
	free(mt);
	vhost_net_close(vn);
	errno = err;
	return -1;
}

void vhost_net_close(struct vhost_net *vn)
{
	if (vn->fd >= 0) {
		struct vhost_vring_file backend = { .index = TX_VQ, .fd = -1 };

		/* Stops the worker using the tap before the fds go. */
		ioctl(vn->fd, VHOST_NET_SET_BACKEND, &backend);
		close(vn->fd);
	}
	if (vn->kick >= 0)
		close(vn->kick);
	if (vn->call >= 0)
		close(vn->call);
	if (vn->mem)
		munmap(vn->mem, vn->mem_len);
	free(vn->free_ids);
	memset(vn, 0, sizeof(*vn));
	vn->fd = vn->kick = vn->call = -1;
}

int vhost_net_post(struct vhost_net *vn, const struct virtio_net_hdr *hdr,
		   const void *frame, size_t len)
{
	return vhost_net_post_split(vn, hdr, frame, len, len, 0);
}

int vhost_net_post_split(struct vhost_net *vn, const struct virtio_net_hdr *hdr,
			 const void *frame, size_t len, size_t first, size_t piece)
{
	size_t n = 1 + (len > first && piece ? (len - first + piece - 1) / piece : 0);
	const uint8_t *src = frame;
	uint16_t head = 0, prev = 0;

	if (first > len || (len > first && !piece) || n > vn->nfree ||
	    VHOST_NET_HDR_LEN + first > vn->slot || piece > vn->slot) {
		errno = n > vn->nfree ? ENOBUFS : EMSGSIZE;
		return -1;
	}
	for (size_t i = 0, off = 0; i < n; i++) {
		uint16_t id = vn->free_ids[--vn->nfree];
		uint8_t *buf = slot_addr(vn, id);
		size_t take = i ? (len - off < piece ? len - off : piece) : first;

		if (!i) {
			memset(buf, 0, VHOST_NET_HDR_LEN);
			if (hdr)
				memcpy(buf, hdr, sizeof(*hdr));
			memcpy(buf + VHOST_NET_HDR_LEN, src, first);
			vn->vr.desc[id].addr = (uint64_t)(uintptr_t)buf;
			vn->vr.desc[id].len = VHOST_NET_HDR_LEN + first;
			head = id;
		} else {
			memcpy(buf, src + off, take);
			vn->vr.desc[id].addr = (uint64_t)(uintptr_t)buf;
			vn->vr.desc[id].len = take;
			vn->vr.desc[prev].flags = VRING_DESC_F_NEXT;
			vn->vr.desc[prev].next = id;
		}
		vn->vr.desc[id].flags = 0;
		vn->vr.desc[id].next = 0;
		off += take;
		prev = id;
	}
	vn->vr.avail->ring[vn->avail_idx & (vn->num - 1)] = head;
	vn->avail_idx++;
	vn->posted++;
	return 0;
}

int vhost_net_kick(struct vhost_net *vn)
{
	uint64_t one = 1;

	/* The descriptors and ring entries before the index that shows them. */
	__atomic_store_n(&vn->vr.avail->idx, vn->avail_idx, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&vn->vr.used->flags, __ATOMIC_ACQUIRE) & VRING_USED_F_NO_NOTIFY)
		return 0;	/* the worker is polling the ring already */
	vn->kicks++;
	return write(vn->kick, &one, sizeof(one)) == sizeof(one) ? 0 : -1;
}

static int reap_ready(struct vhost_net *vn)
{
	uint16_t used = __atomic_load_n(&vn->vr.used->idx, __ATOMIC_ACQUIRE);
	int n = 0;

	while (vn->used_idx != used) {
		struct vring_used_elem *e = &vn->vr.used->ring[vn->used_idx & (vn->num - 1)];

		if (e->id >= vn->num || vn->nfree >= vn->num) {
			errno = EPROTO;
			return -1;
		}
		/* A chain (vhost_net_post_split()) comes back by its head. */
		for (uint16_t id = e->id;; id = vn->vr.desc[id].next) {
			if (vn->nfree >= vn->num) {
				errno = EPROTO;
				return -1;
			}
			vn->free_ids[vn->nfree++] = id;
			if (!(vn->vr.desc[id].flags & VRING_DESC_F_NEXT))
				break;
		}
		vn->used_idx++;
		n++;
	}
	vn->completed += n;
	return n;
}

int vhost_net_reap(struct vhost_net *vn, double timeout)
{
	double end = mono() + timeout;
	uint64_t v;
	int n;

	for (;;) {
		n = reap_ready(vn);
		if (n || timeout <= 0 || vn->nfree == vn->num)
			return n;
		/* Wait for the call eventfd, then look again. */
		struct pollfd pfd = { .fd = vn->call, .events = POLLIN };
		double left = end - mono();

		if (left <= 0)
			return 0;
		if (poll(&pfd, 1, left > 0.05 ? 50 : (int)(left * 1000) + 1) < 0 && errno != EINTR)
			return -1;
		if (read(vn->call, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -1;
	}
}

int vhost_net_drain(struct vhost_net *vn, double timeout)
{
	double end = mono() + timeout;

	while (vn->nfree < vn->num) {
		double left = end - mono();

		if (left <= 0 || vhost_net_reap(vn, left) < 0)
			return -1;
	}
	return 0;
}
