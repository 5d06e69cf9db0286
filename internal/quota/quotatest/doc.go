// Package quotatest holds the test helpers the quota packages share: building resource lists
// from "name=quantity" pairs, rendering them in a stable form, and bounding the time one
// fuzz input may take (Within), to catch stalls. Only tests import it.
package quotatest
