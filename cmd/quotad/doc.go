// Command quotad runs the quotad server: the Kubernetes API with exact ResourceQuota
// accounting, on an embedded etcd by default. main only turns flags into a
// server.Config and runs it until SIGINT or SIGTERM.
package main
