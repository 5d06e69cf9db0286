package server

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

func TestVersionFrom(t *testing.T) {
	t.Parallel()
	base := func(f func(*version.Info)) version.Info {
		v := versionFrom(nil)
		f(&v)
		return v
	}
	cases := []struct {
		name string
		bi   *debug.BuildInfo
		want version.Info
	}{
		{"no build info", nil, base(func(*version.Info) {})},
		{"no vcs stamp", &debug.BuildInfo{GoVersion: "go1.26.8"}, base(func(v *version.Info) { v.GoVersion = "go1.26.8" })},
		{"clean", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "9278d4d0123456789abcdef0123456789abcdef0"},
			{Key: "vcs.time", Value: "2026-11-25T22:10:01Z"}, {Key: "vcs.modified", Value: "false"},
		}}, base(func(v *version.Info) {
			v.GoVersion, v.GitCommit, v.GitTreeState, v.BuildDate = "go1.26.8", "9278d4d0123456789abcdef0123456789abcdef0", "clean", "2026-11-25T22:10:01Z"
		})},
		{"dirty", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.time", Value: "2026-11-25T22:10:01Z"}, {Key: "vcs.modified", Value: "true"},
		}}, base(func(v *version.Info) {
			v.GoVersion, v.GitCommit, v.GitTreeState, v.BuildDate = "go1.26.8", "abc", "dirty", "2026-11-25T22:10:01Z"
		})},
	}
	for _, c := range cases {
		if got := versionFrom(c.bi); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	v := versionFrom(nil)
	if v.Major != "1" || v.Minor != "37" || v.GitVersion != "v1.37.0+quotad" || v.EmulationMinor != "37" || v.MinCompatibilityMinor != "36" ||
		v.GitCommit != "" || v.GitTreeState != "" || v.BuildDate != "1970-01-01T00:00:00Z" {
		t.Errorf("unstamped: %+v", v)
	}
}

// TestEmulatedVersionMatchesAPI: the emulated minor is the one of the k8s.io/api and
// k8s.io/apimachinery quotad is built with, so served kinds, fields and validation wording
// are those of the version /version reports.
func TestEmulatedVersionMatchesAPI(t *testing.T) {
	t.Parallel()
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || (f[0] != "k8s.io/api" && f[0] != "k8s.io/apimachinery") {
			continue
		}
		seen++
		if !strings.HasPrefix(f[1], "v0."+emulatedMinor+".") {
			t.Errorf("go.mod requires %s %s, but quotad emulates %s", f[0], f[1], KubernetesVersion)
		}
	}
	if seen != 2 {
		t.Errorf("k8s.io/api and k8s.io/apimachinery not found in go.mod (%d seen)", seen)
	}
	if !strings.HasPrefix(KubernetesVersion, "v"+emulatedMajor+"."+emulatedMinor+".") {
		t.Errorf("KubernetesVersion %s vs %s.%s", KubernetesVersion, emulatedMajor, emulatedMinor)
	}
}
