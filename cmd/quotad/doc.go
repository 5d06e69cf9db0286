// Command quotad runs the quotad server: the Kubernetes API with exact ResourceQuota
// accounting, on an embedded etcd by default. main only turns flags into a
// server.Config and runs it until SIGINT or SIGTERM. Subcommands: `quotad kubeconfig`
// mints a client certificate kubeconfig; `quotad etcd members|remove` shows or changes the
// members of the clustered embedded etcd running on --data-dir; `quotad snapshot save FILE`
// saves an etcd snapshot of the running embedded etcd of --data-dir (or of --etcd-servers)
// and `quotad snapshot restore FILE --data-dir D [--from-data-dir OLD]` restores one into a
// new data dir (storage.RestoreSnapshot, server.CopyCredentials); `quotad token` prints
// the join token of the clustered embedded etcd of --data-dir (printed by --cluster-init
// only when it makes it), and leaves room for commands under it. A SIGINT or SIGTERM
// before the server is ready (a cluster member waiting for its quorum) stops it with
// status 0.
package main
