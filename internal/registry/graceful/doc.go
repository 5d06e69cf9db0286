// Package graceful decides graceful deletion as upstream's BeforeDelete does: what a delete
// of an object of a gracefully deleted kind (pods) stamps on it (deletionTimestamp,
// deletionGracePeriodSeconds), when a second delete shortens the period or writes nothing,
// and when a deleting object has no grace period left. It is pure: the store writes what
// it decides.
package graceful
