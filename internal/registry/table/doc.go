// Package table renders stored objects as a meta.k8s.io/v1 Table, the document
// kubectl asks for with "Accept: application/json;as=Table;v=v1;g=meta.k8s.io".
//
// It owns the server-side printing that kube-apiserver does in
// pkg/printers/internalversion (per-kind columns and cells),
// k8s.io/apiserver/pkg/registry/rest (the default "Name, Created At" convertor
// for kinds without a printer) and the apiextensions-apiserver table convertor
// (custom resources with additionalPrinterColumns), and kube-aggregator's
// APIService table. Column names, types,
// formats, priorities, descriptions and cell texts match upstream byte for
// byte; the code is written against the k8s.io/api v1 types.
//
// Invariants:
//   - The server always prints "wide": every column is returned, and columns
//     that kubectl shows only with -o wide carry Priority 1 (upstream calls its
//     printers with GenerateOptions{Wide: true}).
//   - Time-dependent cells (AGE, restarts "N (Xs ago)", Job DURATION, CronJob
//     LAST SCHEDULE, Event times, custom "date" columns) are computed from the
//     injected now, never from the wall clock.
//   - One object (a GET, a watch event) prints as upstream prints one; a list prints
//     as upstream's list printer, which for StorageClass marks only the effective
//     default and for FlowSchema orders by matching precedence (StorageClassListPrinter,
//     SortFlowSchemas; the strategies' ConvertListToTable).
//   - internal/registry's TestTableCellsAsUpstream compares every served kind's cells
//     with upstream's, recorded by hack/conformance/tables.
//   - Input objects are read-only: a row's Object is either the object itself,
//     a deep copy with apiVersion/kind filled in, or a fresh
//     PartialObjectMetadata.
//   - List metadata (resourceVersion, continue, remainingItemCount) is not
//     known here; the caller sets table.ListMeta (for a single GET upstream sets
//     the object's resourceVersion there).
package table
