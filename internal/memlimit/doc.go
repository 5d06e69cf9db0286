// Package memlimit keeps the Go runtime's soft memory limit in step with the live heap.
//
// A fixed soft limit is wrong at both ends: set low, a server whose live heap grows past it
// (a large cluster) collects without pause; set high, a server with a modest live heap
// keeps up to (1+GOGC/100) times it resident, long after the load that grew it is gone.
// Following the live heap measured by the last collection gives a floor for small
// servers and room to grow for large ones.
package memlimit
