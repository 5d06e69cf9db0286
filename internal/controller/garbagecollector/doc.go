// Package garbagecollector is quotad's garbage collector: it deletes objects whose owners
// (metadata.ownerReferences) are gone, and carries out the foreground and orphan deletion
// policies the registry records as finalizers, as upstream's garbage collector does:
//
//   - background: the registry deletes the owner at once; its dependents, now dangling,
//     are deleted (each with the policy its own finalizers ask for, else background);
//   - foreground: the owner keeps deletionTimestamp and the foregroundDeletion finalizer;
//     its dependents are deleted in foreground, and the finalizer is removed (which deletes
//     the owner) once no dependent with blockOwnerDeletion is left;
//   - orphan: the owner's reference is removed from every dependent, then the orphan
//     finalizer, which deletes the owner.
//
// A dependent with another live owner only loses its references to the missing ones. Owners
// in a cycle deleted in foreground do not wait for each other forever: a dependent deleted in
// foreground whose own dependent is already deleting in foreground first stops blocking its
// owners (blockOwnerDeletion false), as upstream.
//
// Invariants: the dependency graph is built from watches of every served resource (custom
// resources included, picked up as CRDs are established); an object with no owners, no
// finalizers and no deletion under way is kept by its UID alone (it matters to the graph only
// as a live owner). Every decision re-reads the objects involved from storage and every
// delete carries a UID precondition, so a stale graph can delay the collector but never make
// it delete a live object's dependents or a recreated object. The watches are independent
// of each other, so an owner's deletion can reach the graph before a dependent created just
// before it: an orphan or foreground deletion, which acts on every dependent, is carried out
// only once every watch has delivered every change up to the owner's revision (asking the
// resources' hubs for progress notifications, which come as bookmarks), so no dependent
// that existed then is missed (missed, it would be deleted once its owner is gone instead of
// orphaned, or outlive an owner deleted in foreground). All writes go through the
// registry, so quota is credited in the same transaction as each delete. Several collectors
// (quotad replicas) may run at once.
package garbagecollector
