package etcdsnapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestPrune(t *testing.T) {
	cases := []struct {
		name      string
		files     []string
		retention int
		kept      []string
	}{
		{
			name:      "keeps the newest of this node by the time in the name",
			files:     []string{"etcd-snapshot-n1-100", "etcd-snapshot-n1-99", "etcd-snapshot-n1-1000", "etcd-snapshot-n1-200"},
			retention: 2,
			kept:      []string{"etcd-snapshot-n1-1000", "etcd-snapshot-n1-200"},
		},
		{
			name:      "within retention nothing goes",
			files:     []string{"etcd-snapshot-n1-1", "etcd-snapshot-n1-2"},
			retention: 5,
			kept:      []string{"etcd-snapshot-n1-1", "etcd-snapshot-n1-2"},
		},
		{
			name: "other nodes, partial files, on-demand saves and strangers stay",
			files: []string{"etcd-snapshot-n1-1", "etcd-snapshot-n1-2", "etcd-snapshot-n1-3",
				"etcd-snapshot-n2-1", "etcd-snapshot-n1-4.part", "etcd-snapshot-n1-x", "etcd-snapshot-n1-", "backup.db",
				"etcd-snapshot-n1-extra-5"},
			retention: 1,
			kept: []string{"backup.db", "etcd-snapshot-n1-", "etcd-snapshot-n1-3", "etcd-snapshot-n1-4.part",
				"etcd-snapshot-n1-extra-5", "etcd-snapshot-n1-x", "etcd-snapshot-n2-1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			removed, err := Prune(dir, "n1", c.retention)
			if err != nil {
				t.Fatal(err)
			}
			if len(removed)+len(c.kept) != len(c.files) {
				t.Errorf("removed %v", removed)
			}
			if got := names(t, dir); !slices.Equal(got, c.kept) {
				t.Errorf("kept %v, want %v", got, c.kept)
			}
		})
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out // ReadDir sorts by name
}

// TestSchedulerSavesOnScheduleAndPrunes drives the scheduler with a fake clock: one
// snapshot per schedule time, named after the node and the time, pruned to the retention.
func TestSchedulerSavesOnScheduleAndPrunes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snapshots")
	start := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	saved := make(chan string)
	s, err := New(Config{
		Schedule: "TZ=UTC */1 * * * *", Dir: dir, Node: "n1", Retention: 2, Clock: clk,
		Save: func(ctx context.Context, path string) error {
			if err := os.WriteFile(path, []byte("snapshot"), 0o600); err != nil {
				return err
			}
			saved <- path
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	var want []string
	for i := range 3 {
		waitForWaiter(t, clk)
		clk.Step(time.Minute) // past the next minute
		got := <-saved
		// Named by the time it was taken: the fake clock stepped past the schedule time.
		if wantName := Name("n1", start.Add(time.Duration(i+1)*time.Minute)); filepath.Base(got) != wantName {
			t.Errorf("snapshot %d: %s, want %s", i, filepath.Base(got), wantName)
		}
		want = append(want, filepath.Base(got))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, want[1:]) {
		t.Errorf("kept %v, want the newest two of %v", got, want)
	}
}

func waitForWaiter(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !clk.HasWaiters() {
		if time.Now().After(deadline) {
			t.Fatal("the scheduler does not wait for its next time")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	save := func(context.Context, string) error { return nil }
	cases := []Config{
		{Schedule: "not a schedule", Dir: "d", Node: "n", Retention: 5, Save: save},
		{Schedule: "", Dir: "d", Node: "n", Retention: 5, Save: save},
		{Schedule: "@hourly", Dir: "d", Node: "n", Retention: 0, Save: save},
		{Schedule: "@hourly", Dir: "", Node: "n", Retention: 5, Save: save},
	}
	for _, c := range cases {
		if _, err := New(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := New(Config{Schedule: "0 */5 * * *", Dir: "d", Node: "n", Retention: 5, Save: save}); err != nil {
		t.Error(err)
	}
}
