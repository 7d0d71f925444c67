package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// loopFS is an ext4 file system in an image file, loop-mounted: the
// size-limited disk of the master's store.
type loopFS struct {
	image string
	dir   string // mount point
	dev   string // the loop device, once known
}

// diskUnavailable says why this machine cannot run the disk-full cycle
// ("" when it can): it needs root and mount, umount, losetup and mkfs.ext4.
func diskUnavailable() string {
	if os.Geteuid() != 0 {
		return "not root (a loop mount needs root)"
	}
	for _, tool := range []string{"mount", "umount", "losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not found"
		}
	}
	return ""
}

// mountLoop makes an ext4 file system of size bytes in dir/disk.img and
// mounts it on dir/disk. No blocks are reserved for root (-m 0): the
// broker, running as root, would otherwise see a full disk later than df.
func mountLoop(ctx context.Context, dir string, size int64) (*loopFS, error) {
	l := &loopFS{image: filepath.Join(dir, "disk.img"), dir: filepath.Join(dir, "disk")}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(l.image)
	if err != nil {
		return nil, err
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if _, err := command(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", l.image); err != nil {
		return nil, err
	}
	if _, err := command(ctx, "mount", "-o", "loop", l.image, l.dir); err != nil {
		return nil, err
	}
	if out, err := command(ctx, "losetup", "-j", l.image); err == nil {
		// "/dev/loop3: [2049]:1234 (/path/disk.img)"
		if dev, _, ok := strings.Cut(out, ":"); ok {
			l.dev = strings.TrimSpace(dev)
		}
	}
	return l, nil
}

// unmount unmounts the file system (lazily when busy) and detaches the
// loop device; it runs on every exit path, so it uses no caller context.
func (l *loopFS) unmount() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if _, err := command(ctx, "umount", l.dir); err != nil {
		if _, lerr := command(ctx, "umount", "-l", l.dir); lerr != nil {
			errs = append(errs, err, lerr)
		}
	}
	// mount -o loop sets autoclear, so the device usually went with the
	// umount; detach it if it is still bound to the image.
	if out, err := command(ctx, "losetup", "-j", l.image); err == nil && strings.TrimSpace(out) != "" && l.dev != "" {
		if _, err := command(ctx, "losetup", "-d", l.dev); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(l.image); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// filler keeps a file system full: it grows its file into whatever space
// is free, until it is removed.
type filler struct {
	path string
	f    *os.File
}

func newFiller(dir string) (*filler, error) {
	path := filepath.Join(dir, "chaos-filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &filler{path: path, f: f}, nil
}

// fill takes every free block: fallocate of the free space first (fast),
// then 4 KiB writes until ENOSPC (what fallocate's rounding left). It
// returns the bytes the file holds.
func (fl *filler) fill() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(fl.f.Fd()), &st); err != nil {
		return 0, err
	}
	size, err := fl.f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free > 1<<20 {
		// Leave a megabyte to fallocate's all-or-nothing: the writes below
		// take it.
		if err := unix.Fallocate(int(fl.f.Fd()), 0, size, free-1<<20); err == nil {
			size += free - 1<<20
		} else if !errors.Is(err, syscall.ENOSPC) {
			return size, fmt.Errorf("fallocate filler: %w", err)
		}
	}
	if _, err := fl.f.Seek(size, io.SeekStart); err != nil {
		return size, err
	}
	buf := make([]byte, 4096)
	for {
		n, err := fl.f.Write(buf)
		size += int64(n)
		if errors.Is(err, syscall.ENOSPC) {
			return size, nil
		}
		if err != nil {
			return size, fmt.Errorf("write filler: %w", err)
		}
	}
}

// remove deletes the file: the space is free again.
func (fl *filler) remove() error {
	return errors.Join(fl.f.Close(), os.Remove(fl.path))
}

// usedPercent is the file system's use as df counts it.
func usedPercent(dir string) float64 {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Blocks == 0 {
		return 0
	}
	used := st.Blocks - st.Bfree
	return 100 * float64(used) / float64(used+st.Bavail)
}

// command runs a tool to its end; the error carries its output.
func command(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
