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
NONCE=G0ldenN0nce4Init
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
pids=
for c in 5 6 7; do taskset -c $c sh -c 'while :; do :; done' & pids="$pids $!"; done
sleep 1
cat /proc/interrupts > /tmp/int0
sleep 3
cat /proc/interrupts > /tmp/int1
kill $pids 2>/dev/null; wait 2>/dev/null
rec interrupts_before 0 /tmp/int0
rec interrupts_after 0 /tmp/int1
echo 3 > /tmp/fact; rec busy_window_s 0 /tmp/fact
dmesg > /tmp/fact 2>&1; rec dmesg 0 /tmp/fact
ok=1
n=$(grep -c ^processor /proc/cpuinfo)
[ "$n" = 8 ] || { echo "isolab: precheck: $n CPUs online, expected 8"; ok=0; }
iso=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)
[ "$iso" = '5-7' ] || { echo "isolab: precheck: isolated '$iso', expected '5-7'"; ok=0; }
nf=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null)
[ "$nf" = '5-7' ] || { echo "isolab: precheck: nohz_full '$nf', expected '5-7'"; ok=0; }
skip=$((1-ok))
echo $ok > /tmp/fact; rec precheck $((1-ok)) /tmp/fact
: > /tmp/sysctls
echo '0' > /proc/sys/vm/numa_stat; w=$?
printf '%s\t%s\t%s\n' vm.numa_stat $w "$(cat /proc/sys/vm/numa_stat 2>/dev/null | tr '\t\n' '  ')" >> /tmp/sysctls
echo "isolab: sysctl vm.numa_stat = $(cat /proc/sys/vm/numa_stat 2>/dev/null)"
echo '1' > /proc/sys/kernel/timer_migration; w=$?
printf '%s\t%s\t%s\n' kernel.timer_migration $w "$(cat /proc/sys/kernel/timer_migration 2>/dev/null | tr '\t\n' '  ')" >> /tmp/sysctls
echo "isolab: sysctl kernel.timer_migration = $(cat /proc/sys/kernel/timer_migration 2>/dev/null)"
rec sysctls 0 /tmp/sysctls
for d in /proc/irq/[0-9]*; do
  echo "${d##*/} $(cat $d/effective_affinity_list 2>/dev/null)"
done > /tmp/fact
rec irq_affinity 0 /tmp/fact
echo injected
L=/sys/kernel/tracing/events/lock/contention_begin
if [ "$(cat $L/enable 2>/dev/null)" = 1 ]; then echo 'flags == 1 || flags == 8' > $L/filter; echo 'stacktrace if flags == 1 || flags == 8' > $L/trigger; fi
fact lock_contention_trigger $L/trigger
if [ $skip = 0 ]; then
cd /tmp/out
echo "isolab: step latency start"
isolab-mark step-arm 2>/dev/null
T=/sys/kernel/tracing
if [ -d $T/events ]; then echo 0 > $T/tracing_on; echo > $T/trace; echo 1 > $T/tracing_on; fi
cat /proc/interrupts > latency.interrupts_before
read w0 rest < /proc/uptime
isolab-mark step-begin 2>/dev/null
timeout -s KILL 40 sh /isolab/steps/latency.sh > latency.stdout 2> latency.stderr 3>&-
rc=$?
isolab-mark step-end 2>/dev/null
[ -d $T/events ] && echo 0 > $T/tracing_on
read w1 rest < /proc/uptime
cat /proc/interrupts > latency.interrupts_after
echo "$w0 $w1" > latency.window
killall -q -KILL stress-ng cyclictest vmstat-overhead rtla page-fault-bench
if [ -d $T/events ]; then
  for d in $T/per_cpu/cpu*; do cat $d/trace > /tmp/trace.${d##*/cpu} 2>/dev/null; done
  for c in 5 6 7; do echo "# cpu $c"; cat /tmp/trace.$c 2>/dev/null; done > latency.trace
  : > latency.vmstat_queue
  grep -F -H -e '# ' -e 'CPU:' -e ': contention_' -e ': <stack trace>' -e ' => ' -e 'function=vmstat_update' /tmp/trace.* 2>/dev/null | awk -v q=latency.vmstat_queue '{i=index($0, ":"); f=substr($0, 1, i-1); $0=substr($0, i+1)} f != cur {cur=f; print "# cpu " substr(f, index(f, "trace.")+6); s=0} /workqueue_queue_work:.*function=vmstat_update/{print > q; s=0; next} /^# (cpu |entries-in-buffer)/{print; s=0; next} /^CPU:[0-9]+ \[LOST /{print; s=0; next} /: contention_(begin|end): /{s=($0 ~ /contention_begin/); print; next} /: <stack trace>/{if (s) print; next} /^ => /{if (s) print; next} {s=0}' > latency.lock_contention
  rec latency.vmstat_queue 0 latency.vmstat_queue
  rec latency.lock_contention 0 latency.lock_contention
  rec latency.trace 0 latency.trace; rm -f /tmp/trace.*; echo 1 > $T/tracing_on; fi
echo "isolab: step latency exit $rc"
rec latency.stdout $rc latency.stdout
rec latency.stderr $rc latency.stderr
rec latency.window 0 latency.window
rec latency.interrupts_before 0 latency.interrupts_before
rec latency.interrupts_after 0 latency.interrupts_after
rec latency.json $rc cyclictest.json
rec latency.load.yaml $rc load.yaml
echo "isolab: step vmstat-idle start"
isolab-mark step-arm 2>/dev/null
cat /proc/interrupts > vmstat-idle.interrupts_before
read w0 rest < /proc/uptime
isolab-mark step-begin 2>/dev/null
timeout -s KILL 60 sh /isolab/steps/vmstat-idle.sh > vmstat-idle.stdout 2> vmstat-idle.stderr 3>&-
rc=$?
isolab-mark step-end 2>/dev/null
read w1 rest < /proc/uptime
cat /proc/interrupts > vmstat-idle.interrupts_after
echo "$w0 $w1" > vmstat-idle.window
killall -q -KILL stress-ng cyclictest vmstat-overhead rtla page-fault-bench
echo "isolab: step vmstat-idle exit $rc"
rec vmstat-idle.stdout $rc vmstat-idle.stdout
rec vmstat-idle.stderr $rc vmstat-idle.stderr
rec vmstat-idle.window 0 vmstat-idle.window
rec vmstat-idle.interrupts_before 0 vmstat-idle.interrupts_before
rec vmstat-idle.interrupts_after 0 vmstat-idle.interrupts_after
fi
finish
