// Upstream's IPAddress-backed ClusterIP allocator, re-typed with the standard library only, so the
// bench can run it beside ours on the same fills. The algorithm follows
// pkg/registry/core/service/ipallocator/ipallocator.go (the v1alpha1 file this project started
// from) line by line: netip first/offset/last addresses, calculateRangeOffset (KEP-3070, from
// bitmap.go), math/big for the offset add, rand.Int63n / rand.Uint64, the wraparound iterator, one
// String() and one lookup per candidate, create failing on an existing name, release = delete.
//
// What is left out, and why: the lister and the client are one Go map (apiServer below), so no
// IPAddress object is built, sent, decoded or watched — Go gets no events; the metrics calls (the
// upstream create evaluates Used() and Free(), each a List of the whole cache, even with metrics
// disabled) and the utiltrace per AllocateNext are not made. Every omission favours Go.
//
// Two variants share the code:
//
//	seed    as that file is: the /64 draw uses the global rand.Uint64() and big.NewInt(int64(offset)),
//	        so an offset ≥ 2^63 becomes negative and the address lands outside the range
//	master  with kubernetes PR #134193: the allocator's own rand, SetUint64, and the overflow guard
//	        that keeps offsetAddress + offset from passing the family width.
package main

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"net"
	"net/netip"
)

type variant int

const (
	seedVariant variant = iota
	masterVariant
)

func (v variant) String() string {
	if v == seedVariant {
		return "go-seed"
	}
	return "go-master"
}

var (
	errFull       = errors.New("range is full")
	errAllocated  = errors.New("provided IP is already allocated")
	errNotFound   = errors.New("not found")
	errNotInRange = errors.New("provided IP is not in the valid range")
)

// apiServer stands in for both the informer's lister and the API client: the names of the
// IPAddress objects that exist. Create fails on an existing name (AlreadyExists), as the API does.
type apiServer struct {
	objects map[string]struct{}
}

func newAPIServer() *apiServer { return &apiServer{objects: make(map[string]struct{})} }

func (s *apiServer) get(name string) error {
	if _, ok := s.objects[name]; ok {
		return nil
	}
	return errNotFound
}

func (s *apiServer) create(name string) error {
	if _, ok := s.objects[name]; ok {
		return errAllocated
	}
	s.objects[name] = struct{}{}
	return nil
}

func (s *apiServer) delete(name string) error {
	if _, ok := s.objects[name]; !ok {
		return errNotFound
	}
	delete(s.objects, name)
	return nil
}

// allocator is upstream's Allocator without the API machinery.
type allocator struct {
	variant       variant
	prefix        netip.Prefix
	firstAddress  netip.Addr // first IP address within the range
	offsetAddress netip.Addr // IP address that delimits the upper and lower subranges
	lastAddress   netip.Addr // last IP address within the range
	rangeOffset   int        // subdivides the range to prefer dynamic allocation from the upper range
	size          uint64     // usable addresses, capped at MaxUint64
	api           *apiServer
	rand          *rand.Rand
}

// newAllocator follows NewIPAllocator; upstream seeds rand with the time, the bench with `seed`.
func newAllocator(cidrText string, api *apiServer, v variant, seed int64) (*allocator, error) {
	_, cidr, err := net.ParseCIDR(cidrText)
	if err != nil {
		return nil, err
	}
	prefix, err := netip.ParsePrefix(cidr.String())
	if err != nil {
		return nil, err
	}
	if prefix.Addr().Is6() && prefix.Bits() < 64 {
		return nil, fmt.Errorf("shortest allowed prefix length for service CIDR is 64, got %d", prefix.Bits())
	}
	size := hostsPerNetwork(cidr)
	ipFirst := prefix.Masked().Addr().Next()
	ipLast, err := broadcastAddress(prefix)
	if err != nil {
		return nil, err
	}
	if prefix.Addr().Is4() {
		ipLast = ipLast.Prev()
	}
	a := &allocator{variant: v, prefix: prefix, firstAddress: ipFirst, lastAddress: ipLast, size: size, api: api}
	a.rangeOffset = calculateRangeOffset(cidr)
	a.offsetAddress, err = a.addOffsetAddress(ipFirst, uint64(a.rangeOffset))
	if err != nil {
		return nil, err
	}
	a.rand = rand.New(rand.NewSource(seed))
	return a, nil
}

// allocate follows Allocate / allocateService.
func (a *allocator) allocate(ip net.IP) error {
	addr, err := netip.ParseAddr(ip.String())
	if err != nil {
		return err
	}
	if addr.Less(a.firstAddress) || a.lastAddress.Less(addr) {
		return errNotInRange
	}
	return a.api.create(ip.String())
}

// allocateNext follows AllocateNext / allocateNextService.
func (a *allocator) allocateNext() (net.IP, error) {
	// rand.Int63n panics for n <= 0 so we need to avoid problems when
	// converting from uint64 to int64
	rangeSize := a.size - uint64(a.rangeOffset)
	var offset uint64
	switch {
	case rangeSize >= math.MaxInt64:
		if a.variant == seedVariant {
			offset = rand.Uint64()
		} else {
			offset = a.rand.Uint64()
			if math.MaxUint64-offset < uint64(a.rangeOffset) {
				offset -= uint64(a.rangeOffset)
			}
		}
	case rangeSize == 0:
		return net.IP{}, errFull
	default:
		offset = uint64(a.rand.Int63n(int64(rangeSize)))
	}
	iterator := a.ipIterator(a.offsetAddress, a.lastAddress, offset)
	ip, err := a.allocateFromRange(iterator)
	if err == nil {
		return ip, nil
	}
	// check the lower range
	if a.rangeOffset != 0 {
		offset = uint64(a.rand.Intn(a.rangeOffset))
		iterator = a.ipIterator(a.firstAddress, a.offsetAddress.Prev(), offset)
		ip, err = a.allocateFromRange(iterator)
		if err == nil {
			return ip, nil
		}
	}
	return net.IP{}, errFull
}

// ipIterator yields every address of [first, last] once, starting at first + offset and wrapping
// around, then an invalid address.
func (a *allocator) ipIterator(first netip.Addr, last netip.Addr, offset uint64) func() netip.Addr {
	// There are no modulo operations for IP addresses
	modulo := func(addr netip.Addr) netip.Addr {
		if addr.Compare(last) == 1 {
			return first
		}
		return addr
	}
	next := func(addr netip.Addr) netip.Addr {
		return modulo(addr.Next())
	}
	start, err := a.addOffsetAddress(first, offset)
	if err != nil {
		return func() netip.Addr { return netip.Addr{} }
	}
	start = modulo(start)
	ip := start
	seen := false
	return func() netip.Addr {
		value := ip
		// is the last or the first iteration
		if value == start {
			if seen {
				return netip.Addr{}
			}
			seen = true
		}
		ip = next(ip)
		return value
	}
}

// allocateFromRange is upstream's linear scan: one String() and one lookup per candidate.
func (a *allocator) allocateFromRange(iterator func() netip.Addr) (net.IP, error) {
	for {
		ip := iterator()
		if !ip.IsValid() {
			break
		}
		name := ip.String()
		err := a.api.get(name)
		// continue if ip already exist
		if err == nil {
			continue
		}
		// address is not present on the cache, try to allocate it
		if err = a.api.create(name); err != nil {
			continue
		}
		return ip.AsSlice(), nil
	}
	return net.IP{}, errFull
}

// release follows Release: delete by name, errors ignored.
func (a *allocator) release(ip net.IP) error {
	_ = a.api.delete(ip.String())
	return nil
}

// has follows Has: a Get by name.
func (a *allocator) has(ip net.IP) bool {
	return a.api.get(ip.String()) == nil
}

// addOffsetAddress returns the address at the provided offset within the subnet. The seed converts
// the offset with int64(offset); master (PR #134193) with SetUint64.
func (a *allocator) addOffsetAddress(address netip.Addr, offset uint64) (netip.Addr, error) {
	addressBytes := address.AsSlice()
	addressBig := big.NewInt(0).SetBytes(addressBytes)
	var offsetBig *big.Int
	if a.variant == seedVariant {
		offsetBig = big.NewInt(int64(offset))
	} else {
		offsetBig = big.NewInt(0).SetUint64(offset)
	}
	r := big.NewInt(0).Add(addressBig, offsetBig).Bytes()
	// r must be 4 or 16 bytes depending of the ip family
	// bigInt conversion to bytes will not take this into consideration
	// and drop the leading zeros, so we have to take this into account.
	lenDiff := len(addressBytes) - len(r)
	if lenDiff > 0 {
		r = append(make([]byte, lenDiff), r...)
	} else if lenDiff < 0 {
		return netip.Addr{}, fmt.Errorf("invalid address %v", r)
	}
	addr, ok := netip.AddrFromSlice(r)
	if !ok {
		return netip.Addr{}, fmt.Errorf("invalid address %v", r)
	}
	return addr, nil
}

// hostsPerNetwork: IPv4 2^h − 2, IPv6 2^h − 1, capped at MaxUint64.
func hostsPerNetwork(subnet *net.IPNet) uint64 {
	ones, bits := subnet.Mask.Size()
	if bits-ones >= 64 {
		return math.MaxUint64
	}
	max := uint64(1) << uint(bits-ones)
	if max == 0 {
		return 0
	}
	max--
	if subnet.IP.To4() != nil {
		if max == 0 {
			return 0
		}
		max--
	}
	return max
}

// broadcastAddress sets all the host bits of the subnet.
func broadcastAddress(subnet netip.Prefix) (netip.Addr, error) {
	base := subnet.Masked().Addr()
	bytes := base.AsSlice()
	n := 8*len(bytes) - subnet.Bits()
	for i := len(bytes) - 1; i >= 0 && n > 0; i-- {
		if n >= 8 {
			bytes[i] = 0xff
			n -= 8
		} else {
			mask := ^uint8(0) >> (8 - n)
			bytes[i] |= mask
			break
		}
	}
	addr, ok := netip.AddrFromSlice(bytes)
	if !ok {
		return netip.Addr{}, fmt.Errorf("invalid address %v", bytes)
	}
	return addr, nil
}

// calculateRangeOffset (KEP-3070, bitmap.go): min(max(16, cidrSize/16), 256), 0 when cidrSize ≤ 16.
func calculateRangeOffset(cidr *net.IPNet) int {
	const (
		min  = 16
		max  = 256
		step = 16
	)
	cidrSize := rangeSize(cidr)
	if cidrSize <= min {
		return 0
	}
	offset := cidrSize / step
	if offset < min {
		return min
	}
	if offset > max {
		return max
	}
	return int(offset)
}

// rangeSize is k8s.io/utils/net RangeSize: 0 for an IPv4 /0 or /1 and an IPv6 /0 or /1, else 2^h
// saturating at MaxInt64.
func rangeSize(subnet *net.IPNet) int64 {
	ones, bits := subnet.Mask.Size()
	if bits == 32 && (bits-ones) >= 31 || bits == 128 && (bits-ones) >= 127 {
		return 0
	}
	if bits-ones >= 63 {
		return math.MaxInt64
	}
	return int64(1) << uint(bits-ones)
}
