package broker

import (
	"crypto/tls"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/remoting"
)

// tlsSettings builds the listeners' TLS policy and the outgoing
// connections' TLS configuration (nil: plaintext) from the tls.* keys.
// Every listener of the broker (remoting, HA) takes the same policy.
func tlsSettings(t *config.TLSConfig) (remoting.TLSListener, *tls.Config, error) {
	mode, err := remoting.ParseTLSMode(t.Mode())
	if err != nil {
		return remoting.TLSListener{}, nil, err
	}
	sc, err := t.ServerTLS()
	if err != nil {
		return remoting.TLSListener{}, nil, err
	}
	cc, err := t.ClientTLS()
	if err != nil {
		return remoting.TLSListener{}, nil, err
	}
	return remoting.TLSListener{Mode: mode, Config: sc}, cc, nil
}
