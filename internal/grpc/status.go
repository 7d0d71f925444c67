package grpc

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/rocketd/rocketd/internal/protocol"
)

func status(code v2.Code, msg string) *v2.Status { return &v2.Status{Code: code, Message: msg} }

// okMessage is the message of an OK status, the code's name.
var okMessage = v2.Code_OK.String()

func okStatus() *v2.Status { return status(v2.Code_OK, okMessage) }

// remotingCode maps a remoting response code to apache.rocketmq.v2.Code
// as Java's ResponseBuilder does (RESPONSE_CODE_MAPPING, then the
// ProxyException codes the proxy raises for the same conditions);
// anything else is INTERNAL_SERVER_ERROR with the broker's remark.
func remotingCode(code int32) v2.Code {
	switch code {
	case protocol.Success:
		return v2.Code_OK
	case protocol.SystemBusy:
		return v2.Code_TOO_MANY_REQUESTS
	case protocol.RequestCodeNotSupported:
		return v2.Code_NOT_IMPLEMENTED
	case protocol.SubscriptionGroupNotExist:
		return v2.Code_CONSUMER_GROUP_NOT_FOUND
	case protocol.TopicNotExist:
		return v2.Code_TOPIC_NOT_FOUND
	case protocol.NoPermission:
		return v2.Code_FORBIDDEN
	case protocol.MessageIllegal:
		return v2.Code_BAD_REQUEST
	case protocol.InvalidParameter:
		return v2.Code_BAD_REQUEST
	case protocol.FlushDiskTimeout:
		return v2.Code_MASTER_PERSISTENCE_TIMEOUT
	case protocol.FlushSlaveTimeout:
		return v2.Code_SLAVE_PERSISTENCE_TIMEOUT
	case protocol.SlaveNotAvailable:
		return v2.Code_HA_NOT_AVAILABLE
	}
	return v2.Code_INTERNAL_SERVER_ERROR
}

func remotingStatus(code int32, remark string) *v2.Status {
	c := remotingCode(code)
	if c == v2.Code_OK {
		return okStatus()
	}
	return status(c, remark)
}

// untilClosed is ctx, ended also when the server closes: a held receive
// or a telemetry stream must not hold GracefulStop up. The server's end
// cancels it through a registered callback (context.AfterFunc), not a
// goroutine per stream; cancel unregisters it.
func (s *Server) untilClosed(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	unregister := context.AfterFunc(s.life, cancel)
	return ctx, func() {
		unregister()
		cancel()
	}
}
