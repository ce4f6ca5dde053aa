#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /run
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /tmp/out
NONCE=M1nimalN0nce
echo "isolab: init started"
read t_init rest < /proc/uptime
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
# rec NAME RC FILE: one length-framed record on the result channel (guest/channel.h), sent
# as NAME.gz, compressed, when FILE is larger than 4 KiB.
rec() {
  rec_file=$3; rec_name=$1
  if [ -f "$rec_file" ]; then n=$(wc -c < "$rec_file"); else n=0; fi
  if [ "$n" -gt 4096 ] && gzip -1 -c "$rec_file" > /tmp/rec.gz 2>/dev/null; then
    rec_file=/tmp/rec.gz; rec_name=$1.gz; n=$(wc -c < /tmp/rec.gz)
  fi
  printf '@@ISOLAB REC %s %s %s %s\n' "$NONCE" "$rec_name" "$2" "$n" >&3
  [ "$n" -gt 0 ] && cat "$rec_file" >&3
  printf '\n' >&3
}
fact() {
  if [ -e "$2" ]; then cat "$2" > /tmp/fact 2>/dev/null; rec "$1" $? /tmp/fact; fi
}
# The last record and DONE may still sit in the UART's buffer: stty's tcsetattr(TCSADRAIN)
# waits until they are sent, since poweroff -f does not.
finish() {
  dmesg > /tmp/dmesg_end 2>&1; rec dmesg_end 0 /tmp/dmesg_end
  read t_end rest < /proc/uptime
  printf 'init %s\nfinish %s\n' "$t_init" "$t_end" > /tmp/timeline; rec timeline 0 /tmp/timeline
  printf '@@ISOLAB DONE %s\n' "$NONCE" >&3
  stty -F /dev/ttyS1 raw -echo 2>/dev/null
  exec 3>&-
  echo "isolab: powering off"
  poweroff -f
}
uname -r > /tmp/fact; rec uname_r 0 /tmp/fact
fact cmdline /proc/cmdline
fact cpu_online /sys/devices/system/cpu/online
fact cpu_possible /sys/devices/system/cpu/possible
fact isolated /sys/devices/system/cpu/isolated
fact nohz_full /sys/devices/system/cpu/nohz_full
fact default_smp_affinity /proc/irq/default_smp_affinity
fact workqueue_cpumask /sys/devices/virtual/workqueue/cpumask
fact clocksource /sys/devices/system/clocksource/clocksource0/current_clocksource
grep ' _stext$' /proc/kallsyms > /tmp/fact 2>/dev/null; rec kallsyms_stext $? /tmp/fact
fact trace_events /sys/kernel/tracing/set_event
fact node_online /sys/devices/system/node/online
if [ -d /sys/devices/system/node/node0 ]; then
  for d in /sys/devices/system/node/node[0-9]*; do
    echo "${d##*/} $(cat $d/cpulist) $(grep MemTotal $d/meminfo | tr -s ' ' | cut -d' ' -f4)"
  done > /tmp/fact
  rec numa_nodes 0 /tmp/fact
fi
for d in /sys/devices/system/cpu/cpu[0-9]*; do
  t=$d/topology
  echo "${d##*/cpu} $(cat $t/physical_package_id) $(cat $t/core_id) $(cat $t/thread_siblings_list)"
done > /tmp/fact 2>/dev/null
rec cpu_topology 0 /tmp/fact
cat /proc/interrupts > /tmp/int0
sleep 3
cat /proc/interrupts > /tmp/int1
rec interrupts_before 0 /tmp/int0
rec interrupts_after 0 /tmp/int1
echo 3 > /tmp/fact; rec busy_window_s 0 /tmp/fact
dmesg > /tmp/fact 2>&1; rec dmesg 0 /tmp/fact
ok=1
n=$(grep -c ^processor /proc/cpuinfo)
[ "$n" = 2 ] || { echo "isolab: precheck: $n CPUs online, expected 2"; ok=0; }
iso=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)
[ "$iso" = '' ] || { echo "isolab: precheck: isolated '$iso', expected ''"; ok=0; }
skip=0
echo $ok > /tmp/fact; rec precheck $((1-ok)) /tmp/fact
for d in /proc/irq/[0-9]*; do
  echo "${d##*/} $(cat $d/effective_affinity_list 2>/dev/null)"
done > /tmp/fact
rec irq_affinity 0 /tmp/fact
if [ $skip = 0 ]; then
cd /tmp/out
echo "isolab: step only start"
isolab-mark step-arm 2>/dev/null
cat /proc/interrupts > only.interrupts_before
read w0 rest < /proc/uptime
isolab-mark step-begin 2>/dev/null
timeout -s KILL 10 sh /isolab/steps/only.sh > only.stdout 2> only.stderr 3>&-
rc=$?
isolab-mark step-end 2>/dev/null
read w1 rest < /proc/uptime
cat /proc/interrupts > only.interrupts_after
echo "$w0 $w1" > only.window
killall -q -KILL stress-ng cyclictest vmstat-overhead rtla page-fault-bench
echo "isolab: step only exit $rc"
rec only.stdout $rc only.stdout
rec only.stderr $rc only.stderr
rec only.window 0 only.window
rec only.interrupts_before 0 only.interrupts_before
rec only.interrupts_after 0 only.interrupts_after
fi
finish
