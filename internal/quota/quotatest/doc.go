// Package quotatest holds the test helpers the quota packages share: building resource lists
// from "name=quantity" pairs, rendering them in a stable form, and bounding the time one
// fuzz input may take (Within), to catch stalls. It also holds the project's one golden-file
// helper (GoldenFile, Golden), which every package with golden files uses. Only tests import
// it.
package quotatest
