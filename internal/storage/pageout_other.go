//go:build !linux

package storage

import "errors"

// PageOut is supported on Linux only (pageout_linux.go).
func (e *Embedded) PageOut() (int64, error) { return 0, errors.ErrUnsupported }

// PageOutIfListed is supported on Linux only (pageout_linux.go).
func (e *Embedded) PageOutIfListed(int64) (int64, error) { return 0, errors.ErrUnsupported }
