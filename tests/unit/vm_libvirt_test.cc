#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"
#include "vm/libvirt.h"

namespace isolab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

VmConfig config() {
  VmConfig c;
  c.name = "isolab-cell-b-1";
  c.kernel = "/cache/bzImage";
  c.initrd = "/run/initramfs.cpio";
  c.cmdline = "nohz_full=5-7 isolcpus=managed_irq,domain,5-7";
  c.vcpus = 8;
  c.memory_mib = 768;
  c.console_log = "/run/console.log";
  c.result_channel = "/run/result.bin";
  return c;
}

TEST(LibvirtXml, TcgDomainShape) {
  std::string want =
      "<domain type='qemu'>\n"
      "  <name>isolab-cell-b-1</name>\n"
      "  <memory unit='MiB'>768</memory>\n"
      "  <vcpu placement='static'>8</vcpu>\n"
      "  <os>\n"
      "    <type arch='x86_64' machine='q35'>hvm</type>\n"
      "    <kernel>/cache/bzImage</kernel>\n"
      "    <initrd>/run/initramfs.cpio</initrd>\n"
      "    <cmdline>nohz_full=5-7 isolcpus=managed_irq,domain,5-7 console=ttyS0 "
      "panic=-1 no_timer_check</cmdline>\n"
      "  </os>\n"
      "  <features><acpi/></features>\n"
      "  <cpu mode='custom' match='exact'><model fallback='allow'>IvyBridge</model>"
      "<feature policy='disable' name='x2apic'/><feature policy='disable' name='tsc-deadline'/>"
      "<topology sockets='1' dies='1' cores='8' threads='1'/></cpu>\n"
      "  <clock offset='utc'/>\n"
      "  <on_poweroff>destroy</on_poweroff>\n"
      "  <on_reboot>destroy</on_reboot>\n"
      "  <on_crash>destroy</on_crash>\n"
      "  <devices>\n"
      "    <serial type='file'><source path='/run/console.log'/><target port='0'/></serial>\n"
      "    <serial type='file'><source path='/run/result.bin'/><target port='1'/></serial>\n"
      "    <controller type='usb' model='none'/>\n"
      "    <memballoon model='none'/>\n"
      "  </devices>\n"
      "</domain>\n";
  EXPECT_EQ(libvirt_domain_xml(config()), want);
}

TEST(LibvirtXml, KvmDomainUsesHostPassthrough) {
  VmConfig c = config();
  c.accel = Accel::kvm;
  std::string x = libvirt_domain_xml(c);
  EXPECT_THAT(x, HasSubstr("<domain type='kvm'>"));
  EXPECT_THAT(x, HasSubstr("<cpu mode='host-passthrough'><topology sockets='1' dies='1' "
                           "cores='8' threads='1'/></cpu>"));
}

TEST(LibvirtXml, HostileValuesAreEscaped) {
  VmConfig c = config();
  c.kernel = "/k/<evil>&\"quote'/]]>bz";
  c.initrd = "/i/a&b";
  c.cmdline = "foo=\"a b\" x=<y> ]]> &amp;";
  c.console_log = "/c/'><serial type='pty'/>";
  c.result_channel = "/r/\"&";
  std::string x = libvirt_domain_xml(c);
  EXPECT_THAT(x, HasSubstr("<kernel>/k/&lt;evil&gt;&amp;&quot;quote&apos;/]]&gt;bz</kernel>"));
  EXPECT_THAT(x, HasSubstr("<initrd>/i/a&amp;b</initrd>"));
  EXPECT_THAT(x,
              HasSubstr("<cmdline>foo=&quot;a b&quot; x=&lt;y&gt; ]]&gt; &amp;amp; console=ttyS0"));
  EXPECT_THAT(x, HasSubstr("<source path='/c/&apos;&gt;&lt;serial type=&apos;pty&apos;/&gt;'/>"));
  EXPECT_THAT(x, HasSubstr("<source path='/r/&quot;&amp;'/>"));
  EXPECT_THAT(x, Not(HasSubstr("]]>")));
  EXPECT_THAT(x, Not(HasSubstr("type='pty'")));
}

TEST(LibvirtXml, ControlBytesAreRejectedWithField) {
  VmConfig c = config();
  c.cmdline = std::string("a\x01") + "b";
  EXPECT_THAT([&] { libvirt_domain_xml(c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("cmdline: control byte 1")));
}

TEST(LibvirtXml, CpuModels) {
  EXPECT_EQ(libvirt_cpu_xml("host"), "<cpu mode='host-passthrough'/>");
  EXPECT_EQ(libvirt_cpu_xml("host,-arch-capabilities"),
            "<cpu mode='host-passthrough'><feature policy='disable' "
            "name='arch-capabilities'/></cpu>");
  EXPECT_EQ(libvirt_cpu_xml("qemu64,+x2apic"),
            "<cpu mode='custom' match='exact'><model fallback='allow'>qemu64</model>"
            "<feature policy='require' name='x2apic'/></cpu>");
  EXPECT_THAT([] { libvirt_cpu_xml("host,arch-capabilities"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("'arch-capabilities' is not +name")));
}

TEST(LibvirtXml, NumaCellsInTheCpuElement) {
  VmConfig c = config();  // 8 vCPUs, 768 MiB
  c.sockets = 8;
  c.numa_nodes = {{{0, 1, 2, 3}, 512}, {{4, 5, 6, 7}, 256}};
  EXPECT_THAT(libvirt_domain_xml(c),
              HasSubstr("name='tsc-deadline'/><topology sockets='8' dies='1' cores='1' "
                        "threads='1'/><numa><cell id='0' cpus='0-3' memory='512' unit='MiB'/>"
                        "<cell id='1' cpus='4-7' memory='256' unit='MiB'/></numa></cpu>\n"));
  c.cpu_model = "host,-arch-capabilities";
  EXPECT_THAT(libvirt_domain_xml(c),
              HasSubstr("<cpu mode='host-passthrough'><feature policy='disable' "
                        "name='arch-capabilities'/><topology sockets='8'"));
}

TEST(LibvirtXml, CputuneAndTopology) {
  VmConfig c = config();
  c.sockets = 2;
  c.cores = 4;
  c.vcpu_pin = {"8", "9", "10", "11", "12", "13", "14", "15"};
  c.emulator_pin = "0-7";
  std::string x = libvirt_domain_xml(c);
  EXPECT_THAT(x, HasSubstr("  <cputune>\n    <vcpupin vcpu='0' cpuset='8'/>\n"));
  EXPECT_THAT(x, HasSubstr("    <vcpupin vcpu='7' cpuset='15'/>\n    <emulatorpin cpuset='0-7'/>\n"
                           "  </cputune>\n"));
  EXPECT_THAT(x, HasSubstr("name='tsc-deadline'/><topology sockets='2' dies='1' cores='4' "
                           "threads='1'/></cpu>"));
}

// The plugin reaches QEMU through libvirt's passthrough: the namespace on the domain element
// and the same -plugin value as QemuBackend's argv, XML-escaped.
TEST(LibvirtXml, InsnPluginThroughQemuCommandline) {
  VmConfig c = config();
  c.insn_plugin =
      InsnPluginConfig{"/b/libisolab-insn-count.so", "/run/a'b,c.txt", {5, 6, 7}, "/k/System.map"};
  std::string x = libvirt_domain_xml(c);
  EXPECT_EQ(x.substr(0, x.find('\n')),
            "<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>");
  EXPECT_THAT(x, HasSubstr("  </devices>\n"
                           "  <qemu:commandline>\n"
                           "    <qemu:arg value='-plugin'/>\n"
                           "    <qemu:arg value='file=/b/libisolab-insn-count.so,"
                           "out=/run/a&apos;b,,c.txt,profile_cpus=5-7,symbols=/k/System.map'/>\n"
                           "  </qemu:commandline>\n"
                           "</domain>\n"));
  // Under KVM the field is ignored: the XML is the one without it.
  c.accel = Accel::kvm;
  VmConfig plain = c;
  plain.insn_plugin.reset();
  EXPECT_EQ(libvirt_domain_xml(c), libvirt_domain_xml(plain));
  EXPECT_THAT(libvirt_domain_xml(c), Not(HasSubstr("qemu:")));
}

}  // namespace
}  // namespace isolab
