// Package e2e drives the built quotad binary with the real kubectl (/usr/bin/kubectl), as a
// user would, and compares what kubectl prints with golden files in testdata (refresh with
// `go test ./test/e2e -update`). Under CI (CI=true) a missing kubectl fails the tests; on a
// developer machine it skips them. TestClusterRestartBinary drives only quotad binaries (a
// clustered embedded etcd's members restarted without flags, alone and together) and needs
// no kubectl.
package e2e
