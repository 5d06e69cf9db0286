// Package endpointstest builds the Services and pods the tests of both endpoints
// controllers (endpoints and endpointslice) start from: a Service "web" in "ns" selecting
// app=web with a named target port, and pods of app=web serving that port.
package endpointstest
