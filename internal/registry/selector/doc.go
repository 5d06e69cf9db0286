// Package selector owns the label and field selectors of lists and watches: parsing a
// query's labelSelector and fieldSelector (Parse, parse.go), compiling selectors into one
// rule per key (New, compile.go), and matching objects (Selector.Matches), the field
// labels of an object given by its resource (Fielder, which registry.Resource is).
//
// Invariants:
//   - Parse accepts exactly the texts apimachinery's labels.Parse and fields.ParseSelector
//     accept, with the same meaning, and refuses the others with the same message
//     (TestLabelParseAsApimachinery, FuzzLabelParse).
//   - A compiled selector matches exactly the objects apimachinery's selectors of the same
//     requirements match (TestCompiledSelectorsMatchAsApimachinery), at a cost bounded by
//     the object's labels and fields, not by the selector's size.
//   - The package is pure: no IO, no state beyond a selector's lazily parsed copy.
package selector
