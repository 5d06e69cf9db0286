package server

import (
	goruntime "runtime"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/version"
)

// KubernetesVersion is the Kubernetes version quotad emulates: its served kinds and fields
// (k8s.io/api of the same minor), its validation wording (k8s.io/apimachinery of the same
// minor) and what /version reports.
const KubernetesVersion = "v1.37.0"

// emulated is KubernetesVersion's major and minor, and the minimum compatibility version
// kube-apiserver of that minor reports (one minor back).
const (
	emulatedMajor, emulatedMinor = "1", "37"
	minCompatibilityMinor        = "36"
)

// CurrentVersion returns the running binary's version, as /version and --version report it.
func CurrentVersion() version.Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionFrom(bi)
}

// versionFrom builds the version.Info from the Go build info: the VCS revision, commit time and
// modified flag the go command stamps into the binary. Without them the fields are what kube's
// binaries report when built without version ldflags: an empty commit and tree state and the
// epoch as build date.
func versionFrom(bi *debug.BuildInfo) version.Info {
	v := version.Info{
		Major: emulatedMajor, Minor: emulatedMinor,
		EmulationMajor: emulatedMajor, EmulationMinor: emulatedMinor,
		MinCompatibilityMajor: emulatedMajor, MinCompatibilityMinor: minCompatibilityMinor,
		GitVersion: KubernetesVersion + "+quotad",
		BuildDate:  "1970-01-01T00:00:00Z",
		GoVersion:  goruntime.Version(), Compiler: goruntime.Compiler,
		Platform: goruntime.GOOS + "/" + goruntime.GOARCH,
	}
	if bi == nil {
		return v
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	var modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.GitCommit = s.Value
		case "vcs.time":
			v.BuildDate = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if v.GitCommit != "" {
		v.GitTreeState = "clean"
		if modified == "true" {
			v.GitTreeState = "dirty"
		}
	}
	return v
}
