// Package core holds the strategies of the core/v1 kinds: one file per kind, each
// the kind's defaulting, create and update preparation, validation, warnings, field
// selectors and table printer (registry.Strategy and its optional interfaces), calling
// the defaults, validation and table libraries. Strategies hold no state and do no IO.
package core
