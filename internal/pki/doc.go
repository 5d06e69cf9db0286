// Package pki makes and keeps quotad's keys and certificates: certificate authorities, the
// certificates they issue (P-256 keys), and private files written so that a crash never
// leaves half a file and an existing file's wider mode is never kept. It is a leaf: it
// imports nothing of quotad's.
package pki
