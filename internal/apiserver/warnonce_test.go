package apiserver

import (
	"slices"
	"testing"
)

// TestOnceEach: a warning text reaches the client once however often admission gives it.
func TestOnceEach(t *testing.T) {
	var got []string
	add := onceEach(func(msg string) { got = append(got, msg) })
	for _, m := range []string{"a", "b", "a", "a", "c", "b"} {
		add(m)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
