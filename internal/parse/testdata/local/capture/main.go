// Loads two trivial sched_cls programs, attaches one with tcx to a device
// and pins the other so that `tc filter add ... object-pinned` can attach
// it the legacy way; then runs the shell script given as argument while the
// attachments exist.
package main

import (
	"log"
	"net"
	"os"
	"os/exec"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

func prog(name string) *ebpf.Program {
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: name, Type: ebpf.SchedCLS, License: "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		log.Fatal(err)
	}
	return p
}

func main() {
	tcxDev, pinPath, script := os.Args[1], os.Args[2], os.Args[3]
	ifc, err := net.InterfaceByName(tcxDev)
	if err != nil {
		log.Fatal(err)
	}
	in := prog("cap_tcx_in")
	l, err := link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: in, Attach: ebpf.AttachTCXIngress})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	eg := prog("cap_tcx_eg")
	l2, err := link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: eg, Attach: ebpf.AttachTCXEgress})
	if err != nil {
		log.Fatal(err)
	}
	defer l2.Close()
	if xdpIfc, err := net.InterfaceByName("xdpcap0"); err == nil {
		xp, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: "cap_xdp", Type: ebpf.XDP, License: "GPL",
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Return()},
		})
		if err != nil {
			log.Fatal(err)
		}
		xl, err := link.AttachXDP(link.XDPOptions{Program: xp, Interface: xdpIfc.Index, Flags: link.XDPGenericMode})
		if err != nil {
			log.Fatal(err)
		}
		defer xl.Close()
	}
	legacy := prog("cap_tc_in")
	if err := legacy.Pin(pinPath); err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatal(err)
	}
}
