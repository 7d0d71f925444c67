package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Java's class names for the authentication plug-ins rocketd implements
// (AuthConfig). Blank selects the same.
const (
	JavaDefaultAuthenticationProvider = "org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider"
	JavaLocalAuthenticationMetadata   = "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider"
	JavaStatelessAuthentication       = "org.apache.rocketmq.auth.authentication.strategy.StatelessAuthenticationStrategy"
	JavaStatefulAuthentication        = "org.apache.rocketmq.auth.authentication.strategy.StatefulAuthenticationStrategy"
	JavaDefaultAuthorizationProvider  = "org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider"
	JavaLocalAuthorizationMetadata    = "org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider"
	JavaStatelessAuthorization        = "org.apache.rocketmq.auth.authorization.strategy.StatelessAuthorizationStrategy"
	JavaStatefulAuthorization         = "org.apache.rocketmq.auth.authorization.strategy.StatefulAuthorizationStrategy"
)

// AuthConfig holds the authentication keys of RocketMQ 5.3's AuthConfig,
// read from broker.conf (and namesrv.conf, where Java has none: rocketd's
// NameServer authenticates too). The fields bind with Java's key names.
type AuthConfig struct {
	// AuthenticationEnabled makes every request carry a valid signature
	// of a known, enabled user (false).
	AuthenticationEnabled bool `prop:"authenticationEnabled"`
	// AuthenticationProvider, AuthenticationMetadataProvider and
	// AuthenticationStrategy name Java classes: only blank or the
	// shipped ones (Java*) are accepted. The stateful strategy caches a
	// verdict per connection and user for 60 s; rocketd checks every
	// request either way (a check costs about as much as a cache lookup,
	// and a changed password or status then takes effect at once).
	AuthenticationProvider         string `prop:"authenticationProvider"`
	AuthenticationMetadataProvider string `prop:"authenticationMetadataProvider"`
	AuthenticationStrategy         string `prop:"authenticationStrategy"`
	// AuthenticationWhitelist is a comma-separated list of request codes
	// that need no signature ("" none).
	AuthenticationWhitelist string `prop:"authenticationWhitelist"`
	// InitAuthenticationUser, {"username":..,"password":..}, is created
	// as a SUPER user at start unless that user exists.
	InitAuthenticationUser string `prop:"initAuthenticationUser"`
	// InnerClientAuthenticationCredentials, {"accessKey":..,"secretKey":..},
	// sign the broker's own requests (NameServer registration, slave
	// sync, HA); the user is created as SUPER at start unless it exists.
	InnerClientAuthenticationCredentials string `prop:"innerClientAuthenticationCredentials"`
	// AuthorizationEnabled checks every authenticated request against
	// the ACLs of its user (acls.json); it needs authenticationEnabled
	// (false).
	AuthorizationEnabled bool `prop:"authorizationEnabled"`
	// AuthorizationProvider, AuthorizationMetadataProvider and
	// AuthorizationStrategy: blank or the shipped Java classes. The
	// stateful strategy caches verdicts per connection; rocketd evaluates
	// every request (a change of ACL applies at once).
	AuthorizationProvider         string `prop:"authorizationProvider"`
	AuthorizationMetadataProvider string `prop:"authorizationMetadataProvider"`
	AuthorizationStrategy         string `prop:"authorizationStrategy"`
	// AuthorizationWhitelist is a comma-separated list of request codes
	// that are not authorized ("" none).
	AuthorizationWhitelist string `prop:"authorizationWhitelist"`
	// MigrateAuthFromV1Enabled imports ACL 1.0's accounts (plain_acl.yml)
	// as users and ACLs at start, skipping accounts whose user exists
	// (false); it needs authenticationEnabled.
	MigrateAuthFromV1Enabled bool `prop:"migrateAuthFromV1Enabled"`
	// PlainAclFile is rocketd's: the plain_acl.yml to import. Blank
	// means Java's places: $ROCKETMQ_HOME/conf/plain_acl.yml and every
	// .yml/.yaml file under $ROCKETMQ_HOME/conf/acl.
	PlainAclFile string `prop:"plainAclFile"`
	// ClusterName is the server's cluster, the Cluster resource of
	// cluster-wide request codes (Java's AuthConfig.clusterName); the
	// broker sets it from brokerClusterName.
	ClusterName string `prop:"-"`
}

// InitUser is initAuthenticationUser parsed.
type InitUser struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// InnerCredentials is innerClientAuthenticationCredentials parsed.
type InnerCredentials struct {
	AccessKey     string `json:"accessKey"`
	SecretKey     string `json:"secretKey"`
	SecurityToken string `json:"securityToken"`
}

// ParseInitUser returns initAuthenticationUser (ok false when unset).
func (c *AuthConfig) ParseInitUser() (u InitUser, ok bool, err error) {
	s := strings.TrimSpace(c.InitAuthenticationUser)
	if s == "" {
		return u, false, nil
	}
	if err := json.Unmarshal([]byte(s), &u); err != nil {
		return u, false, fmt.Errorf(`config: initAuthenticationUser: want {"username":"..","password":".."}: %w`, err)
	}
	if strings.TrimSpace(u.Username) == "" || strings.TrimSpace(u.Password) == "" {
		return u, false, errors.New("config: initAuthenticationUser: username and password must not be blank")
	}
	return u, true, nil
}

// ParseInnerCredentials returns innerClientAuthenticationCredentials (ok
// false when unset).
func (c *AuthConfig) ParseInnerCredentials() (cr InnerCredentials, ok bool, err error) {
	s := strings.TrimSpace(c.InnerClientAuthenticationCredentials)
	if s == "" {
		return cr, false, nil
	}
	if err := json.Unmarshal([]byte(s), &cr); err != nil {
		return cr, false, fmt.Errorf(`config: innerClientAuthenticationCredentials: want {"accessKey":"..","secretKey":".."}: %w`, err)
	}
	if strings.TrimSpace(cr.AccessKey) == "" || strings.TrimSpace(cr.SecretKey) == "" {
		return cr, false, errors.New("config: innerClientAuthenticationCredentials: accessKey and secretKey must not be blank")
	}
	return cr, true, nil
}

// WhitelistCodes returns authenticationWhitelist's request codes.
func (c *AuthConfig) WhitelistCodes() ([]int32, error) {
	return parseCodeList("authenticationWhitelist", c.AuthenticationWhitelist)
}

// AuthorizationWhitelistCodes returns authorizationWhitelist's request
// codes.
func (c *AuthConfig) AuthorizationWhitelistCodes() ([]int32, error) {
	return parseCodeList("authorizationWhitelist", c.AuthorizationWhitelist)
}

func parseCodeList(key, list string) ([]int32, error) {
	var out []int32
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("config: %s: %q is not a request code", key, f)
		}
		out = append(out, int32(n))
	}
	return out, nil
}

// Validate reports every authentication setting that cannot work.
func (c *AuthConfig) Validate() error {
	var errs []error
	check := func(key, v string, allowed ...string) {
		v = strings.TrimSpace(v)
		if v == "" {
			return
		}
		for _, a := range allowed {
			if v == a {
				return
			}
		}
		errs = append(errs, fmt.Errorf("config: %s=%s: rocketd has only %s", key, v, strings.Join(allowed, " or ")))
	}
	check("authenticationProvider", c.AuthenticationProvider, JavaDefaultAuthenticationProvider)
	check("authenticationMetadataProvider", c.AuthenticationMetadataProvider, JavaLocalAuthenticationMetadata)
	check("authenticationStrategy", c.AuthenticationStrategy, JavaStatelessAuthentication, JavaStatefulAuthentication)
	check("authorizationProvider", c.AuthorizationProvider, JavaDefaultAuthorizationProvider)
	check("authorizationMetadataProvider", c.AuthorizationMetadataProvider, JavaLocalAuthorizationMetadata)
	check("authorizationStrategy", c.AuthorizationStrategy, JavaStatelessAuthorization, JavaStatefulAuthorization)
	if _, err := c.WhitelistCodes(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.AuthorizationWhitelistCodes(); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := c.ParseInitUser(); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := c.ParseInnerCredentials(); err != nil {
		errs = append(errs, err)
	}
	// Java lets authorization run without authentication, trusting the
	// AccessKey a request names: anyone could then claim a SUPER user.
	if c.AuthorizationEnabled && !c.AuthenticationEnabled {
		errs = append(errs, errors.New("config: authorizationEnabled=true needs authenticationEnabled=true: "+
			"without it the AccessKey a request names is not verified"))
	}
	if c.MigrateAuthFromV1Enabled && !c.AuthenticationEnabled {
		errs = append(errs, errors.New("config: migrateAuthFromV1Enabled=true needs authenticationEnabled=true: "+
			"the imported users and ACLs would not be used"))
	}
	return errors.Join(errs...)
}

// bindAuth binds the authentication keys of props onto c and returns the
// keys neither binding knew: the auth keys live in their own struct
// (BrokerConfig.Auth, NamesrvConfig.Auth).
// bindSections binds props to c, the tls.* keys to t and the auth keys to
// a (they live in sub-structs the binder does not descend into). A key is
// unknown when none of them knows it; unknown tls.* keys (and those a
// tls.config.file may not set) come last.
func bindSections(props Properties, c any, t *TLSConfig, a *AuthConfig) ([]string, error) {
	props, unknownTLS, err := bindTLS(props, t)
	if err != nil {
		return unknownTLS, err
	}
	unknown, err := Bind(props, c)
	if err == nil {
		unknown, err = bindAuth(props, a, unknown)
	}
	return append(unknown, unknownTLS...), err
}

func bindAuth(props Properties, c *AuthConfig, unknownOuter []string) ([]string, error) {
	unknownAuth, err := Bind(props, c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range unknownOuter {
		for _, a := range unknownAuth {
			if a == k {
				out = append(out, k)
				break
			}
		}
	}
	return out, nil
}
