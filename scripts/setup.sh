#!/usr/bin/env bash
# Installs every build and run dependency of isolab from Debian 12's archive and builds it
# into ./build. Safe to run again. Needs root (or sudo) for apt-get.
# Usage: scripts/setup.sh [NINJA_TARGET...]   (no target: everything, the tests too)
#        scripts/setup.sh --packages-only      (install only: no build, no plugin check)
# Nothing under /etc is written except by apt-get (see the libvirt note below).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build
  build-essential cmake ninja-build pkg-config git ccache clang-format clang-tidy
  # checks: shell scripts, the history database in scripts/same-output.sh
  shellcheck sqlite3
  libboost-dev libboost-filesystem-dev libboost-math-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libarchive-dev libcli11-dev libvirt-dev libsqlite3-dev libssl-dev
  # fuzzing (clang's libFuzzer)
  clang libclang-rt-14-dev
  # run: VMs, guest tools, kernel builds
  qemu-system-x86 qemu-utils libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
  busybox-static rt-tests rtla stress-ng linux-source-6.1 linux-source-6.12
  flex bison bc libelf-dev cpio xz-utils kmod libxml2-utils
  # the robot checks of a series: sparse on the files it touches (docs/results.md)
  sparse
  # a mailed series: b4 am folds the replies' trailers in (docs/spec.md, "Mailed series")
  b4
  # tests: the HTML report is opened in headless Chromium
  chromium
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

# libvirt: isolab uses its own private libvirt (the QEMU driver embedded in isolab, with its
# configuration and state under $ISOLAB_CACHE_DIR/libvirt or a test's temporary directory), so
# /etc/libvirt is neither read nor changed and no libvirt daemon is needed. The one thing that
# driver takes from the system is the libvirt-qemu account, which libvirt requires to exist
# when it runs as root (it is normally created by libvirt-daemon-system, which would pull in
# systemd as init). Only when it is missing is it created, as a locked system account.
if ! getent passwd libvirt-qemu >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "setup: creating the system account libvirt-qemu (libvirt's QEMU driver needs it)"
  getent group libvirt-qemu >/dev/null || $SUDO groupadd -r libvirt-qemu
  $SUDO useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
fi

[ "${1:-}" = --packages-only ] && exit 0

# shellcheck source=scripts/ccache-env.sh
. scripts/ccache-env.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_launcher[@]}" >/dev/null
ninja -C build "$@"
echo "setup: built ${*:-every target} in ./build"

# The instruction-counting QEMU plugin (tcg-plugin/) must load in this host's QEMU and count
# exactly: boot its multiboot test guest once with it (about a second).
ninja -C build isolab isolab-insn-count isolab-test-guest isolab-wake-marker >/dev/null
if ! build/isolab doctor --insn-plugin; then
  echo "setup: this host's QEMU does not run isolab's instruction-counting plugin (see above)" >&2
  exit 1
fi
