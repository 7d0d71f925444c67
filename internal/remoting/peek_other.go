//go:build !unix

package remoting

import "net"

func peekByte(nc net.Conn) (byte, net.Conn, error) { return peekByteBuffered(nc) }
