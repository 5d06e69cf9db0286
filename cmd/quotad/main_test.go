package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestFlagsFillConfig(t *testing.T) {
	o := newOptions()
	err := o.parse([]string{
		"--data-dir=/d", "--bind-address", "0.0.0.0", "--secure-port=0",
		"--etcd-servers", "https://a:2379,https://b:2379", "--etcd-cafile=ca", "--etcd-certfile=c", "--etcd-keyfile=k",
		"--token-auth-file=t.csv", "--admission-control-config-file=adm.yaml",
		"--enable-admission-plugins=ResourceQuota", "--disable-admission-plugins", "LimitRanger,Priority",
		"--resource-quota-sync-period=30s", "--request-timeout=2m", "--max-requests-inflight=7",
		"--max-mutating-requests-inflight=3", "--min-request-timeout=60", "--profiling", "--v=2",
		"--audit-policy-file=p.yaml", "--audit-log-path=-", "--audit-log-maxage=3", "--audit-log-maxbackup=4",
		"--audit-log-maxsize=5", "--audit-log-compress", "--audit-log-mode=batch", "--audit-log-batch-buffer-size=6",
		"--enable-priority-and-fairness=false", "--max-watches-per-user=9",
		"--cluster-init", "--join=https://10.0.0.1:6443", "--join-token=K10x", "--join-token-file=tok",
		"--advertise-address=10.0.0.2", "--etcd-peer-port=12380", "--etcd-client-port=12379",
		"--tls-san=lb.example.com,10.0.0.9", "--tls-san=quotad.internal",
		"--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=5s",
		"--etcd-snapshot-schedule-cron=0 */5 * * *", "--etcd-snapshot-retention=7", "--etcd-snapshot-dir=/snaps",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	checks := []struct {
		name      string
		got, want any
	}{
		{"data-dir", c.DataDir, "/d"},
		{"tls-san", strings.Join(c.TLSSANs, " "), "lb.example.com 10.0.0.9 quotad.internal"},
		{"cluster", strings.TrimSpace(fmt.Sprintln(c.ClusterInit, c.Join, c.JoinToken, c.JoinTokenFile, c.AdvertiseAddress, c.EtcdPeerPort, c.EtcdClientPort)), "true https://10.0.0.1:6443 K10x tok 10.0.0.2 12380 12379"},
		{"bind-address", c.BindAddress, "0.0.0.0"},
		{"secure-port", c.SecurePort, 0},
		{"etcd-servers", strings.Join(c.EtcdServers, " "), "https://a:2379 https://b:2379"},
		{"etcd tls", c.EtcdCAFile + c.EtcdCertFile + c.EtcdKeyFile, "cack"},
		{"token-auth-file", c.TokenAuthFile, "t.csv"},
		{"admission config", c.AdmissionControlConfigFile, "adm.yaml"},
		{"enable", strings.Join(c.EnableAdmissionPlugins, ","), "ResourceQuota"},
		{"disable", strings.Join(c.DisableAdmissionPlugins, ","), "LimitRanger,Priority"},
		{"sync period", c.ResourceQuotaSyncPeriod, 30 * time.Second},
		{"request-timeout", c.RequestTimeout, 2 * time.Minute},
		{"max-requests-inflight", c.MaxRequestsInflight, 7},
		{"max-mutating-requests-inflight", c.MaxMutatingRequestsInflight, 3},
		{"min-request-timeout", c.MinRequestTimeout, time.Minute},
		{"profiling", c.Debug, true},
		{"v=2 is slog.Level(-2)", c.LogLevel, slog.Level(-2)},
		{"audit policy", c.AuditPolicyFile, "p.yaml"},
		{"audit path", c.AuditLogPath, "-"},
		{"audit rotation", [4]int{c.AuditLogMaxAge, c.AuditLogMaxBackup, c.AuditLogMaxSize, c.AuditLogBatchBufferSize}, [4]int{3, 4, 5, 6}},
		{"audit compress", c.AuditLogCompress, true},
		{"audit mode", c.AuditLogMode, "batch"},
		{"enable-priority-and-fairness=false", c.NoPriorityAndFairness, true},
		{"max-watches-per-user", c.MaxWatchesPerUser, 9},
		{"leader-elect", c.LeaderElect, true},
		{"leader-elect durations", [3]time.Duration{c.LeaderElectLeaseDuration, c.LeaderElectRenewDeadline, c.LeaderElectRetryPeriod}, [3]time.Duration{30 * time.Second, 20 * time.Second, 5 * time.Second}},
		{"etcd-snapshot-schedule-cron", c.EtcdSnapshotScheduleCron, "0 */5 * * *"},
		{"etcd-snapshot-retention", c.EtcdSnapshotRetention, 7},
		{"etcd-snapshot-dir", c.EtcdSnapshotDir, "/snaps"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestFlagDefaults(t *testing.T) {
	o := newOptions()
	if err := o.parse(nil); err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	if c.DataDir != "quotad-data" || c.BindAddress != "127.0.0.1" || c.SecurePort != 6443 ||
		c.RequestTimeout != time.Minute || c.MaxRequestsInflight != 400 || c.MaxMutatingRequestsInflight != 200 ||
		c.MinRequestTimeout != 1800*time.Second || c.ResourceQuotaSyncPeriod != 5*time.Minute || c.LogLevel != slog.LevelInfo || c.NoPriorityAndFairness ||
		!c.LeaderElect || c.LeaderElectLeaseDuration != 15*time.Second || c.LeaderElectRenewDeadline != 10*time.Second || c.LeaderElectRetryPeriod != 2*time.Second ||
		c.EtcdSnapshotScheduleCron != "" || c.EtcdSnapshotRetention != 5 || c.EtcdSnapshotDir != "" ||
		c.EtcdPeerPort != 0 || c.EtcdClientPort != 0 { // 0: the kept port on a restart, else 2380 and 2379
		t.Fatalf("defaults: %+v", c)
	}
}

// --kube-api-qps and --kube-api-burst read as kube-controller-manager's: its defaults, 0 as
// client-go's defaults, a negative QPS unpaced.
func TestKubeAPIPacingFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		qps   float32
		burst int
	}{
		{nil, 20, 30},
		{[]string{"--kube-api-qps=100", "--kube-api-burst=100"}, 100, 100},
		{[]string{"--kube-api-qps=0", "--kube-api-burst=0"}, 5, 10},
		{[]string{"--kube-api-qps=-1"}, 0, 30},
	} {
		o := newOptions()
		if err := o.parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if o.cfg.KubeAPIQPS != tc.qps || o.cfg.KubeAPIBurst != tc.burst {
			t.Errorf("%v: qps %v burst %d, want %v %d", tc.args, o.cfg.KubeAPIQPS, o.cfg.KubeAPIBurst, tc.qps, tc.burst)
		}
	}
}

func TestRunHelpVersionAndErrors(t *testing.T) {
	cases := []struct {
		args           []string
		code           int
		stdout, stderr []string
		notStdout      string
	}{
		{args: []string{"--help"}, stdout: []string{"Usage:\n  quotad [flags]\n", "\nGeneric flags:\n\n", "\nEtcd flags:\n\n", "\nClustered etcd flags:\n\n", "--cluster-init", "--join string", "--join-token string", "--join-token-file string", "--advertise-address string", "--etcd-peer-port int", "--etcd-client-port int", "\nLogs flags:\n\n", "  -v, --v Level", "\nGlobal flags:\n\n", "--version version[=true]", "--request-timeout duration"}},
		{args: []string{"-h"}, stdout: []string{"Usage:\n  quotad [flags]\n"}},
		{args: []string{"--version"}, stdout: []string{"quotad v1.37.0+quotad\n"}, notStdout: "Usage"},
		{args: []string{"--bogus"}, code: 1, stderr: []string{"Error: unknown flag: --bogus\nUsage:\n  quotad [flags]\n"}},
		{args: []string{"serve"}, code: 1, stderr: []string{"Error: unknown command \"serve\" for \"quotad\"\n"}},
		{args: []string{"--v=-1"}, code: 1, stderr: []string{`Error: invalid argument "-1" for "-v, --v" flag: must be a non-negative integer`}},
		{args: []string{"--version=json"}, code: 1, stderr: []string{`Error: invalid argument "json" for "--version" flag: valid values are false, true, raw`}},
		{args: []string{"--request-timeout=soon"}, code: 1, stderr: []string{`Error: invalid argument "soon" for "--request-timeout" flag`}},
		{args: []string{"--leader-elect-renew-deadline=15s"}, code: 1, stderr: []string{`Error: invalid leader election configuration: leaderElection.leaseDuration: Invalid value: "15s": LeaseDuration must be greater than RenewDeadline`}},
		{args: []string{"--leader-elect-retry-period=0s"}, code: 1, stderr: []string{`leaderElection.retryPeriod: Invalid value: "0s": must be greater than zero`}},
		{args: []string{"--etcd-snapshot-schedule-cron=61 * * * *"}, code: 1, stderr: []string{`Error: invalid --etcd-snapshot-schedule-cron "61 * * * *": `}},
		{args: []string{"--etcd-snapshot-schedule-cron=@daily", "--etcd-snapshot-retention=0"}, code: 1, stderr: []string{`Error: invalid --etcd-snapshot-retention 0: must be at least 1`}},
		{args: []string{"--etcd-snapshot-schedule=@daily", "--help"}, stdout: []string{"--etcd-snapshot-schedule-cron string", "--leader-elect-lease-duration duration"}, notStdout: "--etcd-snapshot-schedule string"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, errOut.String())
		}
		for _, w := range c.stdout {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: stdout lacks %q:\n%s", c.args, w, out.String())
			}
		}
		for _, w := range c.stderr {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, errOut.String())
			}
		}
		if c.notStdout != "" && strings.Contains(out.String(), c.notStdout) {
			t.Errorf("%v: stdout has %q", c.args, c.notStdout)
		}
	}
}

func TestVersionRaw(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"--version=raw"}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var v map[string]string
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v["major"] != "1" || v["minor"] != "37" || v["emulationMinor"] != "37" || v["gitVersion"] != "v1.37.0+quotad" || v["buildDate"] == "" || v["platform"] == "" || v["goVersion"] == "" {
		t.Fatalf("version info: %v", v)
	}
}

func TestEtcdSnapshotScheduleAlias(t *testing.T) {
	o := newOptions()
	if err := o.parse([]string{"--etcd-snapshot-schedule=@daily"}); err != nil {
		t.Fatal(err)
	}
	if o.cfg.EtcdSnapshotScheduleCron != "@daily" {
		t.Fatalf("--etcd-snapshot-schedule: %q", o.cfg.EtcdSnapshotScheduleCron)
	}
}
