package processor

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// The consuming codes Java's BrokerController registers on the main
// server only. Those not in protocol/codes.go are spelled here (RequestCode
// values) so the VIP server refuses them even before rocketd serves them.
const (
	codeLitePullMessage = 361
	codePopMessage      = 200050
	codePeekMessage     = 200052
	codeNotification    = 200054
	codePollingInfo     = 200055
)

// vipExcluded are the codes the VIP channel does not serve.
var vipExcluded = [...]int32{protocol.PullMessage, codeLitePullMessage, codePopMessage,
	codePeekMessage, codeNotification, codePollingInfo}

// RegisterVIP routes srv as Java's fastRemotingServer, the "VIP channel"
// on listenPort-2 that clients with sendMessageWithVIPChannel use for
// sends and admin calls: every code Register routes, the same handlers,
// except the consuming ones (PULL_MESSAGE, LITE_PULL_MESSAGE, POP_MESSAGE,
// PEEK_MESSAGE, NOTIFICATION, POLLING_INFO), which reach the default
// processor there and are answered REQUEST_CODE_NOT_SUPPORTED, as in Java.
// f are srv's own families (a family serves one server).
func (p *Processor) RegisterVIP(srv *remoting.Server, f Families) {
	p.Register(srv, f)
	for _, code := range vipExcluded {
		srv.Handle(code, f.Admin, notSupported)
	}
}
