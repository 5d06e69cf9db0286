// Package memlimit keeps the Go runtime's soft memory limit in step with the live heap, and
// returns the free heap to the OS when the server goes quiet.
//
// A fixed soft limit is wrong at both ends: set low, a server whose live heap grows past it
// (a large cluster) collects without pause, and one below it collects more often under
// load; set high, a server with a modest live heap keeps up to (1+GOGC/100) times it
// resident, long after the load that grew it is gone. Following the live heap measured by
// the last collection, above a floor, leaves collection to GOGC under load and gives large
// heaps room; trimming in quiet spells gives the memory back afterwards.
package memlimit
