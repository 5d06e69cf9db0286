// Package watchhub owns the fan-out of committed changes to watchers: a Hub runs ONE
// storage watch per resource, decodes each event once (through its Source's Decode) for
// every watcher of that resource, keeps a bounded history so that a watcher starting a
// little in the past (its list's revision) is served from memory, and takes the objects
// this replica's writers offer for the values they commit instead of decoding them again
// (Offer). Starts its history does not cover are served by a watch of their own (Direct).
// The registry makes one hub per resource (Hubs) and turns batches into watch events. A
// watcher reads its batches in its own goroutine (Subscribe, Stream.Each): the hub queues
// them and wakes it, with no goroutine of the hub's between them (Watch adds one, for
// callers that want a channel).
//
// Invariants:
//   - A watcher receives every batch after its start revision, in revision order, or ends
//     with an error batch: a watcher whose backlog (hubSubBuffer batches) fills is dropped
//     with "fell behind" and re-lists, as upstream ends slow watchers; the hub never blocks
//     on a watcher. A backlog holds only what waits (an idle watcher holds no buffer).
//   - History is bounded (hubHistory to 5/4 of hubHistory batches, hubHistoryEvents to
//     5/4 of hubHistoryEvents events: a group-committed batch may hold many objects, and
//     hubHistoryBytes to 5/4 of hubHistoryBytes of values: a cluster quota over many namespaces
//     is large and rewritten often); only its newest hubHotEvents events (to 5/4 of them)
//     are held decoded, older ones as stored, decoded again for a watcher replaying them
//     (so the history is not the bulk of what a garbage collection marks); offers are bounded
//     (maxOffers, maxOfferBytes, maxOffersPerKey: a key rewritten before the hub saw its
//     previous write keeps each offer until its event, and an offer taken forgets the
//     older ones of its key); a hub whose last watcher leaves stops its storage watch and forgets both.
//   - Objects in batches are shared by every watcher and never modified: the store hands
//     out copies (or, for Resource.SharesWrites kinds, the shared object by contract).
//   - An offered object stands for an event only if the event's value is byte for byte the
//     offered value.
package watchhub
