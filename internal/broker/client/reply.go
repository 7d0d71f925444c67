package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocketd/rocketd/internal/remoting"
)

// ErrRequesterNotFound is PushReply's answer when no producer channel is
// registered under the client id.
var ErrRequesterNotFound = errors.New("client: requester channel not found")

// PushReply sends req (PUSH_REPLY_MESSAGE_TO_CLIENT) to the producer
// registered as clientID and waits, at most Config.ReplyPushTimeout, for
// its answer (Java's Broker2Client.callClient). The table lock is released
// before any I/O: a requester that stopped reading holds up only the
// caller.
func (r *Registry) PushReply(ctx context.Context, clientID string, req *remoting.Command) (*remoting.Command, error) {
	ch, ok := r.FindProducerChannel(clientID)
	if !ok {
		return nil, ErrRequesterNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ReplyPushTimeout)
	defer cancel()
	resp, err := ch.Invoke(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("client: push reply to %s (%s): %w", clientID, ch.RemoteAddr(), err)
	}
	return resp, nil
}
