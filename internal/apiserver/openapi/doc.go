// Package openapi builds the OpenAPI v3 documents kube-apiserver serves under /openapi/v3
// (the discovery index and one document per group-version: "api/v1", "apis/apps/v1", ...)
// and the Swagger 2.0 document it serves at /openapi/v2.
//
// quotad has no generated OpenAPI definitions, so the component schemas are built by
// reflection over the k8s.io/api Go types, following kube-openapi's generator rules:
// schema names from OpenAPIModelName (or the Go package path), descriptions from SwaggerDoc,
// optional fields from `omitempty`, defaults for non-pointer values, special types
// (Quantity, IntOrString, Time, MicroTime, Duration, apiextensions JSON) from their
// OpenAPISchemaType/OpenAPIV3OneOfTypes methods, and the strategic-merge-patch and list
// extensions from the `patchStrategy`/`patchMergeKey` struct tags. Custom resources take
// their schema from the CRD version's openAPIV3Schema.
//
// The documents are what real kubectl reads: the PATCH operation of every kind carries its
// x-kubernetes-group-version-kind and the fieldValidation query parameter (so kubectl sends
// fieldValidation=Strict instead of validating on the client), built-in kinds accept
// application/strategic-merge-patch+json, and component schemas carry the
// x-kubernetes-group-version-kind list kubectl apply uses to find patch metadata.
//
// Build builds everything; a Builder does the same but keeps the encoded documents and,
// when called again (e.g. after a CRD change), re-encodes only the group-versions whose
// resources changed. Documents implements http.Handler for /openapi/v3 and its documents.
//
// /openapi/v2 is what kubectl validates with when the server cannot (the items of a
// kind: List, which has no fieldValidation support): client-go fetches it as protobuf
// (a gnostic openapi_v2.Document) and kubectl checks every item against the definition
// carrying its x-kubernetes-group-version-kind, refusing unknown fields and missing
// required ones. BuildV2 (or Builder.BuildV2, which reuses the document until a resource
// changes) builds it from the same walk as v3 in the Swagger 2.0 dialect (references to
// #/definitions/ with their siblings beside them, no enforced defaults, Quantity and
// IntOrString as strings) and the v3 paths converted (body parameters, consumes,
// produces); custom resource schemas are reduced as the apiextensions-apiserver does
// for v2. V2 implements http.Handler with kube-openapi's content negotiation and ETag.
//
// Comment markers reflection cannot see come from markers_generated.go, which `go generate`
// writes (internal/markersgen) from the k8s.io/api, apimachinery and apiextensions sources
// of the versions in go.mod, as kube-openapi's generator reads them: a field (or array
// item, or map value) of an +enum string type gets the sorted values of the constants
// declared for it as "enum", and a field also gets kube-openapi's "Possible enum values:"
// paragraph in its description; a field's +default= marker (JSON or ref(Constant)) is its
// default in /openapi/v3, before the default kube-openapi enforces. TestMarkersGeneratedIsCurrent
// regenerates the file and requires the committed bytes.
//
// Where this package knowingly differs from kube-apiserver's output: no x-kubernetes-map-type, list types only from the patch
// tags plus a small table of known exceptions, no deprecated /watch/ paths, and only the
// media types quotad speaks (JSON, YAML). In /openapi/v2 also: parameters are written in
// place rather than shared through #/parameters/, info.version is "unversioned", the
// discovery paths (/api/, /apis/, /version/) are absent, and the document is not
// gzipped.
//
// Invariants:
//   - Build is a pure function of its input: the same resources give byte-identical
//     documents (JSON object keys are sorted) and therefore identical hashes.
//   - A Documents value is immutable once built and safe for concurrent use; rebuild and
//     swap it when the set of served resources changes (e.g. a CRD is established).
//   - A group-version document depends only on its own resources and on the built-in
//     resources, so a custom resource change never changes another group's hash (kubectl
//     keeps its cached copies).
//   - Every $ref in a document resolves to a schema in that document's components (in
//     /openapi/v2, to one of its definitions).
//   - /openapi/v2 has exactly the paths, operations and parameters of the /openapi/v3
//     documents and every schema they have; its protobuf is its JSON as gnostic parses it,
//     served under the ETag of the JSON.
//   - The "required" list of a built-in schema follows kube-openapi's rule (+required,
//     else +optional, else no omitempty), the markers reflection cannot see being kept in
//     requiredOverride.
//   - A hash is the uppercase hex SHA-512 of the exact bytes served, as kube-openapi's
//     handler3 computes it, and the index links each document with its current hash.
package openapi
