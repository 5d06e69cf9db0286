package registry

import (
	"bytes"
	"fmt"
	"testing"
)

// The remembered writes stay within their bounds: an entry is taken once, an oversized
// value is not kept (and drops what was kept for its key), and the total stays under
// recentMaxBytes however many keys are written.
func TestRecentWritesBounded(t *testing.T) {
	var r recentWrites
	r.put("a", []byte("one"), 5)
	r.put("a", []byte("two"), 6)
	kv, ok := r.take("a")
	if !ok || string(kv.Value) != "two" || kv.ModRevision != 6 || kv.Key != "a" {
		t.Fatalf("take a: %+v %v, want the last put", kv, ok)
	}
	if _, ok := r.take("a"); ok {
		t.Fatal("an entry was taken twice")
	}
	r.put("b", []byte("small"), 7)
	r.put("b", bytes.Repeat([]byte("x"), recentMaxValue+1), 8)
	if _, ok := r.take("b"); ok {
		t.Fatal("an oversized value was kept, or left the older one in place")
	}
	value := bytes.Repeat([]byte("v"), recentMaxValue)
	for i := range 2 * recentMaxBytes / recentMaxValue {
		r.put(fmt.Sprintf("k%d", i), value, int64(i+1))
		if r.bytes > recentMaxBytes {
			t.Fatalf("after %d puts: %d bytes kept, more than %d", i+1, r.bytes, recentMaxBytes)
		}
	}
	total := 0
	for _, kv := range r.m {
		total += len(kv.Value)
	}
	if total != r.bytes || len(r.m) != recentMaxBytes/recentMaxValue {
		t.Fatalf("%d entries of %d bytes counted as %d, want %d entries", len(r.m), total, r.bytes, recentMaxBytes/recentMaxValue)
	}
}
