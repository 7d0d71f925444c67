//go:build !unix

package remoting

import "syscall"

// rawReader is not available without a non-blocking read: connections
// read through net.Conn and keep their read buffer.
type rawReader struct{ b *readBuffer }

func newRawReader(syscall.RawConn) *rawReader { return nil }

func (*rawReader) read([]byte) (int, error) { return 0, nil }
