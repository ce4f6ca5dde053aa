#!/usr/bin/env bash
# Installs the build and run dependencies of isolab from Debian 12's archive and builds it into
# ./build. Safe to run again. Needs root (or sudo) for apt-get.
# Usage: scripts/setup.sh [--main-job] [NINJA_TARGET...]  (no target: everything, the tests too)
#        scripts/setup.sh [--main-job] --packages-only     (install only: no build, no plugin check)
#   --main-job   only what the main job needs (scripts/run-default.sh: build isolab and its guest
#                tools, build and boot 6.1 kernels): the main_job packages below, and ./build
#                configured without the test programs (ISOLAB_TESTS=OFF). Without it: every
#                package (the other examples, the libvirt backend, the tests and the checks) and
#                the test programs.
# ISOLAB_BUILD_TYPE: the CMake build type of ./build, default Release (isolab's C++ at -O1, the
# C of the guest tools at -O2, no debug information: the quickest to build). To debug,
# RelWithDebInfo (-O2 -g) or Debug, e.g.
#   ISOLAB_BUILD_TYPE=RelWithDebInfo scripts/setup.sh isolab
# Nothing under /etc is written except by apt-get (see the libvirt note below).
set -euo pipefail
cd "$(dirname "$0")/.."

main_job=0
packages_only=0
while (($#)); do
  case "$1" in
    --main-job) main_job=1 ;;
    --packages-only) packages_only=1 ;;
    *) break ;;
  esac
  shift
done

# What the main job needs, build and run.
main_job_packages=(
  # build
  build-essential cmake ninja-build pkg-config git ccache
  libboost-dev libboost-filesystem-dev libboost-math-dev nlohmann-json3-dev
  libarchive-dev libcli11-dev libvirt-dev libsqlite3-dev libssl-dev libyaml-cpp-dev
  # run: VMs, guest tools, kernel builds
  qemu-system-x86 busybox-static rt-tests stress-ng linux-source-6.1
  flex bison bc libelf-dev cpio xz-utils kmod
  # the robot checks of a series: sparse on the files it touches (docs/results.md)
  sparse
)
# The rest: other examples and backends, the tests and the checks.
other_packages=(
  # checks: format, clang-tidy, shell scripts, the history database in scripts/same-output.sh
  clang-format clang-tidy shellcheck sqlite3
  # a mailed series: b4 am folds the replies' trailers in (docs/spec.md, "Mailed series")
  b4
  # tests: GoogleTest; the HTML report is opened in headless Chromium; xmllint reads JUnit XML
  libgtest-dev libgmock-dev chromium libxml2-utils
  # fuzzing (clang's libFuzzer)
  clang libclang-rt-14-dev
  # the libvirt backend (isolab's embedded QEMU driver) and its tests
  qemu-utils libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
  # examples/madvise-latency.json (6.12 PREEMPT_RT) and the rtla workloads
  linux-source-6.12 rtla
)
packages=("${main_job_packages[@]}")
((main_job)) || packages+=("${other_packages[@]}")

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
# systemd as init). Only when it is missing is it created, as a locked system account; the main
# job (the qemu backend) does not need it.
if ((!main_job)) && ! getent passwd libvirt-qemu >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "setup: creating the system account libvirt-qemu (libvirt's QEMU driver needs it)"
  getent group libvirt-qemu >/dev/null || $SUDO groupadd -r libvirt-qemu
  $SUDO useradd -r -g libvirt-qemu -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
fi

((packages_only)) && exit 0

# shellcheck source=scripts/ccache-env.sh
. scripts/ccache-env.sh
tests=ON
((main_job)) && tests=OFF
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${ISOLAB_BUILD_TYPE:-Release}" -DISOLAB_TESTS="$tests" \
  "${cmake_launcher[@]}" >/dev/null
ninja -C build "$@"
echo "setup: built ${*:-every target} in ./build"

# The instruction-counting QEMU plugin (tcg-plugin/) must load in this host's QEMU and count
# exactly: boot its multiboot test guest once with it (about a second).
ninja -C build isolab isolab-insn-count isolab-test-guest isolab-wake-marker >/dev/null
if ! build/isolab doctor --insn-plugin; then
  echo "setup: this host's QEMU does not run isolab's instruction-counting plugin (see above)" >&2
  exit 1
fi
