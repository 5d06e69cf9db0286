//go:build !linux

package storage

import "errors"

// PageOut is supported on Linux only (pageout_linux.go).
func (e *Embedded) PageOut() (int64, error) { return 0, errors.ErrUnsupported }

// PageOutIfListed is supported on Linux only (pageout_linux.go).
func (e *Embedded) PageOutIfListed(int64) (int64, error) { return 0, errors.ErrUnsupported }

// ResidentDatabaseBytes: see pageout_linux.go.
const ResidentDatabaseBytes = 128 << 20

// ListPageOutBytes: see pageout_linux.go.
const ListPageOutBytes = 16 << 20

// pageOutListing does nothing where PageOut is unsupported.
func (e *Embedded) pageOutListing(int64) {}
