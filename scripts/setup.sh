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

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build
echo "setup: built ./build/isolab"
