// Package jsonpatch applies RFC 6902 JSON Patch documents with the semantics, and the error
// texts, of gopkg.in/evanphx/json-patch.v4 (the library kube-apiserver applies
// application/json-patch+json with), bounded in the work one patch may cause.
//
// The library runs a patch to its end whatever it costs: its copies may double a document
// with every operation, an insertion into an array copies the array, and nothing watches the
// request that asked for it. Here every patch is bounded, as kube-apiserver bounds it, and
// more:
//   - at most Limits.MaxOperations operations (kube-apiserver's 10,000), else
//     *TooManyOperationsError before any is applied;
//   - copies add at most Limits.MaxCopyBytes bytes in all (kube-apiserver's
//     --json-patch-max-copy-bytes, 3 MiB), else the library's AccumulatedCopySizeError text;
//   - the context is checked before each operation, and a patch whose request ended stops
//     there with the context's error, so no work outlives its request. One operation costs
//     at most a walk of the document (an array insertion, a test's comparison), and the
//     document is at most the stored object plus the patch's values plus MaxCopyBytes;
//   - once its work (bytes copied, array elements moved, bytes tested) reaches
//     Limits.HeavyWork, Limits.Heavy is called, so the caller can charge the request for
//     it before the work goes on.
//
// Invariants: Apply never changes its inputs; a patch that fails changes nothing (the
// caller keeps its document); the result is compact JSON with object keys sorted, as the
// library's.
package jsonpatch
