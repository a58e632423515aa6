#!/usr/bin/env bash
# Builds the root file system of scripts/vm's guest in the directory given: Debian 12 (what the
# README's quick start names) with systemd as init, a kernel and its initramfs, and every
# package scripts/setup installs, so that the guest needs no network. Run by scripts/vm.
set -euo pipefail
rootfs=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

debootstrap --variant=minbase \
  --include=systemd,systemd-sysv,udev,dbus,linux-image-amd64,initramfs-tools,procps,iproute2,ca-certificates \
  bookworm "$rootfs" "$mirror"

cleanup() {
  for m in dev/pts dev proc sys; do umount "$rootfs/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
mount -t proc proc "$rootfs/proc"
mount -t sysfs sys "$rootfs/sys"
mount --bind /dev "$rootfs/dev"
mount --bind /dev/pts "$rootfs/dev/pts"

# The project's own package list, installed the way a user's machine gets it.
install -D -m 0755 "$repo/scripts/setup" "$rootfs/root/setup"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
chroot "$rootfs" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root bash /root/setup </dev/null
chroot "$rootfs" apt-get clean
rm -f "$rootfs/root/setup" "$rootfs/etc/resolv.conf"

echo pyfence-vm >"$rootfs/etc/hostname"
# The job directory: the host's build-vm/job, shared over virtio-9p.
mkdir -p "$rootfs/job"
echo "job /job 9p trans=virtio,version=9p2000.L,msize=262144 0 0" >"$rootfs/etc/fstab"
install -m 0644 "$repo/tests/vm/pyfence-vm-job.service" "$rootfs/etc/systemd/system/"
install -m 0755 "$repo/tests/vm/job.sh" "$rootfs/usr/local/sbin/pyfence-vm-job"
chroot "$rootfs" systemctl enable pyfence-vm-job.service
# Nothing on the console but the kernel and the job: no login prompt waits there.
chroot "$rootfs" systemctl mask serial-getty@ttyS0.service getty@tty1.service
