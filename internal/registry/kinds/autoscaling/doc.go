// Package autoscaling holds the strategies of the autoscaling kinds (v2, and v1 served from v2 storage): one file per kind, each
// the kind's defaulting, create and update preparation, validation, warnings, field
// selectors and table printer (registry.Strategy and its optional interfaces), calling
// the defaults, validation and table libraries. Strategies hold no state and do no IO.
package autoscaling
