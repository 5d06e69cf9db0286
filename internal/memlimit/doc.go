// Package memlimit keeps GOGC and the Go runtime's soft memory limit in step with the live
// heap, and returns the free heap to the OS when the server goes quiet.
//
// A fixed soft limit is wrong at both ends: set low, a server whose live heap grows past it
// (a large cluster) collects without pause, and one below it collects more often under
// load; set high, a server with a modest live heap keeps up to (1+GOGC/100) times it
// resident, long after the load that grew it is gone. The memory allowed follows the live
// heap measured by the last collection, above a floor; GOGC is set after each collection to
// aim the heap at a share of it, so that collections are paced by GOGC, with room to mark
// in, and the soft limit is only a backstop above; trimming in quiet spells gives the
// memory back afterwards.
package memlimit
