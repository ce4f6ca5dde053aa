#!/usr/bin/env bash
# Installs every build and run dependency of isolab from Debian 12's archive and builds it
# into ./build. Safe to run again. Needs root (or sudo) for apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build
  build-essential cmake ninja-build pkg-config git ccache clang-format
  libboost-dev libboost-filesystem-dev libboost-math-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libarchive-dev libcli11-dev libvirt-dev libsqlite3-dev libssl-dev
  # fuzzing (clang's libFuzzer)
  clang libclang-rt-14-dev
  # run: VMs, guest tools, kernel builds
  qemu-system-x86 qemu-utils libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
  busybox-static rt-tests stress-ng linux-source-6.1
  flex bison bc libelf-dev cpio xz-utils kmod libxml2-utils
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi


# libvirt without libvirt-daemon-system (no systemd here): the QEMU driver needs the
# libvirt-qemu account to exist, and with no security driver it runs QEMU as root.
if ! getent group libvirt-qemu >/dev/null; then groupadd -r libvirt-qemu || true; fi
if ! getent passwd libvirt-qemu >/dev/null; then
  useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu || true
fi
if [ -w /etc/libvirt ] && ! grep -q '^security_driver = "none"' /etc/libvirt/qemu.conf 2>/dev/null; then
  printf 'user = "root"\ngroup = "root"\nsecurity_driver = "none"\n' >> /etc/libvirt/qemu.conf
fi
mkdir -p /var/log/libvirt /var/run/libvirt 2>/dev/null || true

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build
echo "setup: built ./build/isolab"
