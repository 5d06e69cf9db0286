// Package quotaverify is quotad's quota verifier. Usage is kept exact by the registry's
// transactions (design.md §2), so this controller does not maintain usage: every sync period
// it recomputes every quota from storage at one revision, compares with status, and repairs
// any drift with a guarded write, logging what drifted and counting repairs. Any drift is a
// bug.
package quotaverify
