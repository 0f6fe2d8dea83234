package tcp

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/engine"
)

// skPass is SK_PASS, the verdict of an SK_REUSEPORT program that lets the
// connection through: to the socket it selected, or, when it selected
// none, to the one the kernel's hash picks.
const skPass = 1

// steerer is a loaded steering program and the socket array it selects
// from.
type steerer interface {
	// add puts the listening socket fd in slot index of the array.
	add(index, fd int) error
	// attach makes the program select the sockets of fd's SO_REUSEPORT
	// group.
	attach(fd int) error
	close() error
}

// groupKey names one SO_REUSEPORT group: the listeners of one binding on
// one port, in one engine.
type groupKey struct {
	e    *engine.Engine
	id   int64
	port uint16
}

// steerGroup is the steering shared by the workers' listeners of a group.
// When the program could not be loaded, prog is nil and the group is plain
// SO_REUSEPORT: the kernel hashes each connection to a listener.
type steerGroup struct {
	key  groupKey
	refs int
	prog steerer
}

// steer adds worker w's listening socket fd to the steering of its group,
// loading the program for the first worker. A kernel that refuses (no
// CAP_BPF, too old) is logged once per group, and the group falls back to
// plain SO_REUSEPORT.
func (b *Binding) steer(w *engine.Worker, key groupKey, fd int) *steerGroup {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.groups == nil {
		b.groups = map[groupKey]*steerGroup{}
	}
	g := b.groups[key]
	if g == nil {
		g = &steerGroup{key: key}
		b.groups[key] = g
		load := b.load
		if load == nil {
			load = loadSteerer
		}
		prog, err := load(w.Engine().Workers())
		if err != nil {
			w.Logger().Warn("tcp: eBPF steering unavailable, using plain SO_REUSEPORT",
				"port", key.port, "err", err)
		} else {
			g.prog = prog
			w.Logger().Info("tcp: eBPF steering loaded", "port", key.port, "workers", w.Engine().Workers())
		}
	}
	g.refs++
	if g.prog != nil {
		err := g.prog.add(w.Index(), fd)
		if err == nil {
			err = g.prog.attach(fd)
		}
		if err != nil {
			w.Logger().Warn("tcp: eBPF steering not attached to this worker's listener", "port", key.port, "err", err)
		}
	}
	return g
}

// unsteer releases a listener's share of its group; the last one closes
// the program and its map.
func (b *Binding) unsteer(g *steerGroup) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g.refs--
	if g.refs > 0 {
		return
	}
	if g.prog != nil {
		_ = g.prog.close()
		g.prog = nil
	}
	delete(b.groups, g.key)
}

// steering reports whether the group of key runs a steering program, for
// tests.
func (b *Binding) steering(key groupKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.groups[key]
	return g != nil && g.prog != nil
}

// ebpfSteerer is the steering program built with cilium/ebpf's asm
// package, so no C compiler is involved. It runs for every connection
// that arrives at the group and selects the socket of worker
// cpu % workers, cpu being the CPU the connection is received on: the
// worker pinned to that CPU, when workers are pinned one to a CPU. An
// empty slot makes the selection fail, and the kernel then hashes as if
// there were no program.
type ebpfSteerer struct {
	sockets *ebpf.Map
	prog    *ebpf.Program
}

func loadSteerer(workers int) (steerer, error) {
	if workers < 1 || workers > engine.MaxWorkers {
		return nil, fmt.Errorf("%d workers", workers)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       "sluice_tcp",
		Type:       ebpf.ReusePortSockArray,
		KeySize:    4,
		ValueSize:  8,
		MaxEntries: uint32(workers),
	})
	if err != nil {
		return nil, fmt.Errorf("reuseport socket array: %w", err)
	}
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Name:         "sluice_steer",
		Type:         ebpf.SkReuseport,
		AttachType:   ebpf.AttachSkReuseportSelect,
		License:      "Dual MIT/GPL",
		Instructions: steerProgram(m.FD(), workers),
	}, ebpf.ProgramOptions{LogDisabled: true})
	if err != nil {
		_ = m.Close()
		return nil, fmt.Errorf("sk_reuseport program: %w", err)
	}
	return &ebpfSteerer{sockets: m, prog: prog}, nil
}

// steerProgram is, in C:
//
//	int steer(struct sk_reuseport_md *ctx) {
//		__u32 key = bpf_get_smp_processor_id() % workers;
//		bpf_sk_select_reuseport(ctx, &sockets, &key, 0);
//		return SK_PASS;
//	}
func steerProgram(sockets, workers int) asm.Instructions {
	return asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnGetSmpProcessorId.Call(),
		asm.Mod.Imm32(asm.R0, int32(workers)),
		asm.StoreMem(asm.RFP, -4, asm.R0, asm.Word),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, sockets),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -4),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnSkSelectReuseport.Call(),
		asm.Mov.Imm(asm.R0, skPass),
		asm.Return(),
	}
}

func (s *ebpfSteerer) add(index, fd int) error {
	if err := s.sockets.Update(uint32(index), uint64(fd), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("socket array slot %d: %w", index, err)
	}
	return nil
}

func (s *ebpfSteerer) attach(fd int) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_EBPF, s.prog.FD()); err != nil {
		return fmt.Errorf("SO_ATTACH_REUSEPORT_EBPF: %w", err)
	}
	return nil
}

func (s *ebpfSteerer) close() error {
	err1 := s.prog.Close()
	err2 := s.sockets.Close()
	if err1 != nil {
		return err1
	}
	return err2
}
