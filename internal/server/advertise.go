package server

import (
	"net"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// advertiseAddress is the address this replica lists in the kubernetes Endpoints: the bind
// address, or for a wildcard bind the host's default interface address, as kube-apiserver
// picks its advertise address (127.0.0.1 when the host has none).
func advertiseAddress(bind string) string {
	if ip := net.ParseIP(bind); ip != nil && !ip.IsUnspecified() {
		return ip.String()
	}
	if ip, err := utilnet.ChooseHostInterface(); err == nil {
		return ip.String()
	}
	return "127.0.0.1"
}
