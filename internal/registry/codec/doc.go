// Package codec owns the wire and stored encodings of objects: request bodies in JSON,
// YAML or Kubernetes protobuf decoded into objects of a kind (Decode, DecodeBody,
// ProtobufToJSON, with upstream's fieldValidation directives and messages; a body's
// apiVersion and kind answered as upstream's decoder answers them, typemeta.go; a patch's
// result decoded as upstream's patch handler decodes it, DecodePatched), a stored
// object pruned to the paths a selector reads (Prune: only what it keeps is decoded), a custom
// resource's pruning and structural defaulting, the checks of quantity texts before any
// decoder parses them (quantity.go), and the stored form (EncodeForStorage, with the
// hand-written encodings of a quota's status.used, QuotaEncoder, and of a cluster quota,
// EncodeClusterQuota). A kind is described by Kind, which registry.Resource implements;
// the registry keeps what ties the stored form to its catalogue (versions served from
// another resource's storage, decoding a stored value).
//
// Invariants:
//   - Pure: no IO and no state but the immutable protobuf scheme; a QuotaEncoder belongs to
//     one chain of planned states and is used by one goroutine at a time.
//   - Errors are apierrors.APIStatus values with upstream's texts (400 for bodies that
//     do not decode, 415 for protobuf bodies of custom resources, 422 naming the field for
//     refused quantity texts, for a custom resource of another kind, and for a patch whose
//     result does not decode). TestTypeMetaGolden and TestPatchedTypeMeta pin upstream's
//     answers to bodies of other versions and kinds, or that are not JSON objects.
//   - A stored object is its kind's JSON (encoding/json's bytes) without
//     metadata.resourceVersion; the hand-written encoders write exactly the bytes
//     encoding/json writes, or fall back to it (TestQuotaEncoderMatchesJSON,
//     TestEncodeClusterQuota), but for a cluster quota's entries, stored as rows under one
//     list of resource names (or, when an entry cannot be a row, in OpenShift's shape
//     without a hard equal to spec.quota.hard); DecodeClusterQuota reads every form back
//     into OpenShift's shape (TestClusterQuotaRowsRoundTrip).
//   - A quantity text resource.ParseQuantity would stall on never reaches it.
package codec
