// Package quotatest holds the test helpers the quota packages share: building resource lists
// from "name=quantity" pairs and rendering them in a stable form. Only tests import it.
package quotatest
