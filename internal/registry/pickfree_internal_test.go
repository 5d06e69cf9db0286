package registry

import (
	"errors"
	"testing"
)

// TestPickFree: a band's last free value is found whatever the random picks hit, the held
// values are read once a call, bands are taken in order, and a full set reports none.
func TestPickFree(t *testing.T) {
	bands := [][2]uint32{{1000, 2000}, {10, 5}} // a large band, then a small one
	for trial := 0; trial < 50; trial++ {
		last := 1000 + randUint32()%2000
		taken := func(v uint32) bool { return v != last && v >= 1000 }
		reads := 0
		var got uint32
		ok, err := pickFree(bands, func(v uint32) (bool, error) {
			if taken(v) {
				return false, nil
			}
			got = v
			return true, nil
		}, func() (map[uint32]bool, error) {
			reads++
			held := map[uint32]bool{}
			for v := uint32(1000); v < 3000; v++ {
				if taken(v) {
					held[v] = true
				}
			}
			return held, nil
		})
		if !ok || err != nil || got != last || reads > 1 {
			t.Fatalf("one free value %d in the first band: got %d, ok %v, err %v, held read %d times", last, got, ok, err, reads)
		}
	}
	// The first band full: the small band gives, every value of it tried without a read.
	var seen []uint32
	ok, err := pickFree(bands, func(v uint32) (bool, error) {
		if v >= 1000 {
			return false, nil
		}
		seen = append(seen, v)
		return v == 14, nil
	}, func() (map[uint32]bool, error) { return map[uint32]bool{}, nil })
	if !ok || err != nil || seen[len(seen)-1] != 14 {
		t.Fatalf("the second band: ok %v, err %v, tried %v", ok, err, seen)
	}
	// Nothing free: none, after trying each small band value once.
	tries := map[uint32]int{}
	ok, err = pickFree([][2]uint32{{10, 5}}, func(v uint32) (bool, error) { tries[v]++; return false, nil }, nil)
	if ok || err != nil || len(tries) != 5 {
		t.Fatalf("a full band: ok %v, err %v, tried %v", ok, err, tries)
	}
	// A read's error is the answer.
	boom := errors.New("boom")
	if _, err := pickFree(bands, func(uint32) (bool, error) { return false, nil }, func() (map[uint32]bool, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("held's error: %v", err)
	}
}
