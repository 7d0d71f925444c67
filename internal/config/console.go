package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// DefaultConsoleListenAddr is where the web console listens unless
// consoleListenAddr says otherwise: loopback, since it is an admin tool.
const DefaultConsoleListenAddr = "127.0.0.1:8082"

// validateConsole checks the console keys (after EnsureDefaults).
func (c *BrokerConfig) validateConsole() error {
	host, port, err := net.SplitHostPort(c.ConsoleListenAddr)
	if err != nil {
		return fmt.Errorf("config: consoleListenAddr %q: want host:port: %w", c.ConsoleListenAddr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("config: consoleListenAddr %q: port out of range 0..65535", c.ConsoleListenAddr)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		return fmt.Errorf("config: consoleListenAddr %q: host must be an IP address or localhost", c.ConsoleListenAddr)
	}
	if (c.ConsoleAccessKey == "") != (c.ConsoleSecretKey == "") {
		return errors.New("config: consoleAccessKey and consoleSecretKey must be set together")
	}
	return nil
}

// ConsoleCredentials returns the access and secret key the console signs
// its admin calls with: consoleAccessKey/consoleSecretKey whenever set (the
// cluster it reads may authenticate even where this broker does not);
// else, with authenticationEnabled, the broker's own
// innerClientAuthenticationCredentials (an error when unset); else none
// (ok false).
func (c *BrokerConfig) ConsoleCredentials() (accessKey, secretKey string, ok bool, err error) {
	if c.ConsoleAccessKey != "" {
		return c.ConsoleAccessKey, c.ConsoleSecretKey, true, nil
	}
	if !c.Auth.AuthenticationEnabled {
		return "", "", false, nil
	}
	inner, set, err := c.Auth.ParseInnerCredentials()
	if err != nil {
		return "", "", false, err
	}
	if !set {
		return "", "", false, errors.New("config: consoleEnable with authenticationEnabled needs consoleAccessKey/consoleSecretKey " +
			"or innerClientAuthenticationCredentials to sign the console's admin calls")
	}
	return inner.AccessKey, inner.SecretKey, true, nil
}
