// Package deploy holds quotad's ready-to-use monitoring assets, which are files, not Go:
// the Grafana dashboard (grafana/quotad-dashboard.json) and the Prometheus alerting rules
// (prometheus/quotad-alerts.yaml), described in docs/monitoring.md.
//
// Its tests keep them honest: every metric named by a PromQL expression of the dashboard
// (panel targets and template variables) or of the rules must be exported by a real
// in-process quotad's /metrics after a few real requests, every rule is well formed and
// carries summary and description annotations, and the dashboard has its datasource and
// namespace variables. The metric names are extracted by a small PromQL lexer
// (promql_test.go) that drops functions, keywords, label matchers, grouping labels,
// durations, strings and Grafana variables. When promtool is installed, the rules also
// pass `promtool check rules` and their unit tests (prometheus/quotad-alerts_test.yaml), and
// every dashboard expression parses with Prometheus's own parser (promtool_test.go).
package deploy
