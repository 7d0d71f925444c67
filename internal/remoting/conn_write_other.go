//go:build !unix

package remoting

import "syscall"

// nowWriter is not available without a non-blocking write: every frame
// then goes through the writer goroutine.
type nowWriter struct{}

func newNowWriter(syscall.RawConn) *nowWriter { return nil }

func (*nowWriter) writeNow([]byte) (int, error) { return 0, nil }
