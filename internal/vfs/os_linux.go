package vfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// Writeback is sync_file_range(2): SYNC_FILE_RANGE_WRITE starts writing the
// range's dirty pages; with wait, WAIT_BEFORE and WAIT_AFTER also wait for
// writeback already under way and for the one started.
func (f osFile) Writeback(off, n int64, wait bool) error {
	flags := unix.SYNC_FILE_RANGE_WRITE
	if wait {
		flags |= unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	}
	for {
		err := unix.SyncFileRange(int(f.Fd()), off, n, flags)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: err}
		}
		return nil
	}
}
