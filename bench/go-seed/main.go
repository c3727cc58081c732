// The bench's driver for the re-typed upstream allocator (allocator.go). bench/go.ts builds this
// program with `go build`, starts one process per series and talks to it over stdin/stdout: one
// command per line in, one JSON object per line out. The harness decides the fills; this program
// loads them untimed and times its own loop, so no cross-process call is inside a measurement.
//
//	open <cidr> <seed>                          a fresh map and both variants over it
//	fill <file>                                 add the offsets in <file> (see readPairs) to the map
//	queries <free|has> <file>                   the addresses allocate+release / has cycle through
//	time <go-seed|go-master> <op> <budgetMs> <timeMs> <minSamples> <maxSamples> <sampleMs>
//	                                            op: nextRelease | full | allocRelease | has
//	                                            → {"samples":[ns/op…],"opsPerSample":n} or {"skipped":"…"}
//	trace <variant> next <k>                    k allocateNext without release → {"ips":[…],"error":…}
//	trace <variant> allocate|release|has <ip>   one call → {"error":…} / {"has":…}
//	pin <cpu>                                   run the timing loops on that CPU, the other threads off it (Linux; pin_linux.go)
//
// Offsets are those of the harness (bench/ranges.ts): 0 is the network address + 1.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

type session struct {
	api       *apiServer
	variants  [2]*allocator
	first     netip.Addr
	freeIPs   []net.IP
	hasIPs    []net.IP
	freeAt    int
	hasAt     int
	lastError string
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	var s *session
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		reply, err := s.handle(&s, f)
		if err != nil {
			reply = map[string]any{"ok": false, "error": err.Error()}
		} else {
			reply["ok"] = true
		}
		b, _ := json.Marshal(reply)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
}

func (s *session) handle(self **session, f []string) (map[string]any, error) {
	if f[0] == "pin" {
		if len(f) != 2 {
			return nil, errors.New("usage: pin <cpu>")
		}
		cpu, err := strconv.Atoi(f[1])
		if err != nil {
			return nil, err
		}
		return map[string]any{}, pinThread(cpu)
	}
	if f[0] == "open" {
		if len(f) != 3 {
			return nil, errors.New("usage: open <cidr> <seed>")
		}
		seed, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, err
		}
		api := newAPIServer()
		ns := &session{api: api}
		for _, v := range []variant{seedVariant, masterVariant} {
			a, err := newAllocator(f[1], api, v, seed+int64(v))
			if err != nil {
				return nil, err
			}
			ns.variants[v] = a
		}
		ns.first = ns.variants[0].firstAddress
		*self = ns
		a := ns.variants[0]
		return map[string]any{"size": strconv.FormatUint(a.size, 10), "rangeOffset": a.rangeOffset}, nil
	}
	if s == nil {
		return nil, errors.New("no range open")
	}
	switch f[0] {
	case "fill":
		if len(f) != 2 {
			return nil, errors.New("usage: fill <file>")
		}
		ips, err := s.readAddrs(f[1])
		if err != nil {
			return nil, err
		}
		for _, ip := range ips {
			if err := s.api.create(ip.String()); err != nil {
				return nil, fmt.Errorf("fill: %s: %v", ip, err)
			}
		}
		return map[string]any{"count": len(s.api.objects)}, nil
	case "queries":
		if len(f) != 3 {
			return nil, errors.New("usage: queries <free|has> <file>")
		}
		ips, err := s.readAddrs(f[2])
		if err != nil {
			return nil, err
		}
		if f[1] == "free" {
			s.freeIPs, s.freeAt = ips, 0
		} else {
			s.hasIPs, s.hasAt = ips, 0
		}
		return map[string]any{"count": len(ips)}, nil
	case "time":
		if len(f) != 8 {
			return nil, errors.New("usage: time <variant> <op> <budgetMs> <timeMs> <minSamples> <maxSamples> <sampleMs>")
		}
		a, err := s.variant(f[1])
		if err != nil {
			return nil, err
		}
		op, err := s.op(a, f[2])
		if err != nil {
			return nil, err
		}
		var n [5]float64
		for i := range n {
			if n[i], err = strconv.ParseFloat(f[3+i], 64); err != nil {
				return nil, err
			}
		}
		return measure(op, n[0], n[1], int(n[2]), int(n[3]), n[4])
	case "trace":
		if len(f) != 4 {
			return nil, errors.New("usage: trace <variant> <call> <arg>")
		}
		a, err := s.variant(f[1])
		if err != nil {
			return nil, err
		}
		return trace(a, f[2], f[3])
	}
	return nil, fmt.Errorf("unknown command %q", f[0])
}

func (s *session) variant(name string) (*allocator, error) {
	for _, a := range s.variants {
		if a.variant.String() == name {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown variant %q", name)
}

// op returns the timed operation: n calls, an error if any answer is not the expected one.
func (s *session) op(a *allocator, name string) (func(n int) error, error) {
	switch name {
	case "nextRelease":
		return func(n int) error {
			for i := 0; i < n; i++ {
				ip, err := a.allocateNext()
				if err != nil {
					return fmt.Errorf("%s: allocateNext: %v", a.variant, err)
				}
				a.release(ip)
			}
			return nil
		}, nil
	case "full":
		return func(n int) error {
			for i := 0; i < n; i++ {
				if _, err := a.allocateNext(); err != errFull {
					return fmt.Errorf("%s: the range is not full", a.variant)
				}
			}
			return nil
		}, nil
	case "allocRelease":
		if len(s.freeIPs) == 0 {
			return nil, errors.New("no free addresses to allocate")
		}
		return func(n int) error {
			for i := 0; i < n; i++ {
				ip := s.freeIPs[s.freeAt]
				if s.freeAt++; s.freeAt == len(s.freeIPs) {
					s.freeAt = 0
				}
				if err := a.allocate(ip); err != nil {
					return fmt.Errorf("%s: allocate %s: %v", a.variant, ip, err)
				}
				a.release(ip)
			}
			return nil
		}, nil
	case "has":
		if len(s.hasIPs) == 0 {
			return nil, errors.New("no has() queries")
		}
		return func(n int) error {
			taken := 0
			for i := 0; i < n; i++ {
				ip := s.hasIPs[s.hasAt]
				if s.hasAt++; s.hasAt == len(s.hasIPs) {
					s.hasAt = 0
				}
				if a.has(ip) {
					taken++
				}
			}
			if taken > n {
				return errors.New("unreachable")
			}
			return nil
		}, nil
	}
	return nil, fmt.Errorf("unknown op %q", name)
}

// measure times op like bench/measure.ts: a probe, ≈ 30 ms of warm-up, then samples of about
// sampleMs each until minSamples are taken and timeMs has passed (or maxSamples). A case whose
// minSamples would not fit budgetMs is reported skipped, as the harness does.
func measure(op func(n int) error, budgetMs, timeMs float64, minSamples, maxSamples int, sampleMs float64) (map[string]any, error) {
	t0 := time.Now()
	if err := op(1); err != nil {
		return nil, err
	}
	perOp := float64(time.Since(t0).Nanoseconds())
	if perOp*float64(minSamples) > budgetMs*1e6*4 {
		return overBudget(perOp, minSamples, budgetMs), nil
	}
	if perOp < 1e6 {
		warm := int(math.Max(1, math.Min(100000, 30e6/math.Max(perOp, 1))))
		t0 = time.Now()
		if err := op(warm); err != nil {
			return nil, err
		}
		perOp = float64(time.Since(t0).Nanoseconds()) / float64(warm)
	}
	if perOp*float64(minSamples) > budgetMs*1e6 {
		return overBudget(perOp, minSamples, budgetMs), nil
	}
	n := int(math.Max(1, math.Round(sampleMs*1e6/math.Max(perOp, 1))))
	deadline := time.Now().Add(time.Duration(timeMs * 1e6))
	samples := []float64{}
	for len(samples) < maxSamples {
		s := time.Now()
		if err := op(n); err != nil {
			return nil, err
		}
		e := time.Now()
		samples = append(samples, float64(e.Sub(s).Nanoseconds())/float64(n))
		if len(samples) >= minSamples && e.After(deadline) {
			break
		}
	}
	sorted := append([]float64(nil), samples...)
	sort.Float64s(sorted)
	m := len(sorted)
	median := sorted[m/2]
	if m%2 == 0 {
		median = (sorted[m/2-1] + sorted[m/2]) / 2
	}
	return map[string]any{"samples": samples, "opsPerSample": n, "nsPerOp": median}, nil
}

func overBudget(perOp float64, minSamples int, budgetMs float64) map[string]any {
	return map[string]any{"skipped": fmt.Sprintf("skipped (over budget): ~%s/op × %d samples > budget %.0f ms", fmtDuration(perOp), minSamples, budgetMs)}
}

func fmtDuration(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.1f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

func trace(a *allocator, call, arg string) (map[string]any, error) {
	errText := func(err error) any {
		if err == nil {
			return nil
		}
		return err.Error()
	}
	if call == "next" {
		k, err := strconv.Atoi(arg)
		if err != nil {
			return nil, err
		}
		ips := []string{}
		for i := 0; i < k; i++ {
			ip, err := a.allocateNext()
			if err != nil {
				return map[string]any{"ips": ips, "error": errText(err)}, nil
			}
			ips = append(ips, ip.String())
		}
		return map[string]any{"ips": ips, "error": nil}, nil
	}
	ip := net.ParseIP(arg)
	if ip == nil {
		return nil, fmt.Errorf("not an IP address: %q", arg)
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	switch call {
	case "allocate":
		return map[string]any{"error": errText(a.allocate(ip))}, nil
	case "release":
		return map[string]any{"error": errText(a.release(ip))}, nil
	case "has":
		return map[string]any{"has": a.has(ip)}, nil
	}
	return nil, fmt.Errorf("unknown call %q", call)
}

// readAddrs reads a file of offsets — little-endian uint32 pairs (hi, lo) — as addresses
// network + 1 + offset, in the family's length (4 or 16 bytes), as a caller would hold them.
func (s *session) readAddrs(path string) ([]net.IP, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("%s: %d bytes is not a whole number of offset pairs", path, len(b))
	}
	ips := make([]net.IP, 0, len(b)/8)
	for i := 0; i < len(b); i += 8 {
		off := uint64(binary.LittleEndian.Uint32(b[i:]))<<32 | uint64(binary.LittleEndian.Uint32(b[i+4:]))
		ips = append(ips, addrAt(s.first, off).AsSlice())
	}
	return ips, nil
}

// addrAt is first + off in the low 64 bits with the carry into the high ones (fills only: untimed).
func addrAt(first netip.Addr, off uint64) netip.Addr {
	if first.Is4() {
		b := first.As4()
		v := binary.BigEndian.Uint32(b[:]) + uint32(off)
		binary.BigEndian.PutUint32(b[:], v)
		return netip.AddrFrom4(b)
	}
	b := first.As16()
	lo := binary.BigEndian.Uint64(b[8:])
	hi := binary.BigEndian.Uint64(b[:8])
	sum := lo + off
	if sum < lo {
		hi++
	}
	binary.BigEndian.PutUint64(b[8:], sum)
	binary.BigEndian.PutUint64(b[:8], hi)
	return netip.AddrFrom16(b)
}
