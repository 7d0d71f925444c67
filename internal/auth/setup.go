package auth

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/vfs"
)

// Setup prepares authentication from a server's AuthConfig. When
// authenticationEnabled is set it opens the users file at usersPath and
// the ACL file next to it, creates the start-up users
// (initAuthenticationUser and the inner client's, both SUPER, unless they
// exist), imports ACL 1.0's accounts when migrateAuthFromV1Enabled, and
// returns the Authenticator to install as the server's guard, authorizing
// too when authorizationEnabled; otherwise the Authenticator is nil.
// inner is innerClientAuthenticationCredentials (nil when unset), which
// sign the server's own requests whether or not it authenticates others,
// as Java's BrokerOuterAPI does.
func Setup(cfg config.AuthConfig, fsys vfs.FS, usersPath string, log *slog.Logger) (a *Authenticator, inner *Credentials, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	cr, hasInner, _ := cfg.ParseInnerCredentials()
	if hasInner {
		inner = &Credentials{AccessKey: cr.AccessKey, SecretKey: cr.SecretKey, SecurityToken: cr.SecurityToken}
	}
	if !cfg.AuthenticationEnabled {
		return nil, inner, nil
	}
	if fsys == nil {
		fsys = vfs.Default
	}
	users, err := OpenUsers(fsys, usersPath)
	if err != nil {
		return nil, nil, err
	}
	var start []User
	if u, ok, _ := cfg.ParseInitUser(); ok {
		start = append(start, User{Username: u.Username, Password: u.Password, UserType: Super})
	}
	if inner != nil {
		start = append(start, User{Username: inner.AccessKey, Password: inner.SecretKey, UserType: Super})
	}
	for _, u := range start {
		created, err := users.Ensure(u)
		if err != nil {
			return nil, nil, fmt.Errorf("auth: create start-up user %s: %w", u.Username, err)
		}
		if created {
			log.Info("auth: user created", "user", u.Username, "type", u.UserType, "file", usersPath)
		}
	}
	aclsPath := ACLsPath(usersPath)
	acls, err := OpenACLs(fsys, aclsPath, users)
	if err != nil {
		return nil, nil, err
	}
	if cfg.MigrateAuthFromV1Enabled {
		files, err := plainACLFilesFor(fsys, cfg.PlainAclFile)
		if err != nil {
			return nil, nil, err
		}
		res, err := MigrateV1(fsys, files, users, acls, log)
		if err != nil {
			return nil, nil, err
		}
		log.Info("auth: ACL 1.0 accounts migrated", "files", files, "users", res.Users, "acls", res.ACLs,
			"skipped", res.Skipped, "failed", res.Failed)
	}
	whitelist, _ := cfg.WhitelistCodes()
	if len(users.List("")) == 0 {
		log.Warn("auth: authentication is on and there are no users: every request will be refused",
			"file", usersPath, "hint", "set initAuthenticationUser")
	}
	log.Info("auth: authentication enabled", "users", usersPath, "whitelist", whitelist)
	a = NewAuthenticator(users, whitelist, log)
	a.acls = acls
	if cfg.AuthorizationEnabled {
		zwl, _ := cfg.AuthorizationWhitelistCodes()
		a.SetAuthorizer(NewAuthorizer(users, acls, cfg.ClusterName, zwl))
		log.Info("auth: authorization enabled", "acls", aclsPath, "cluster", cfg.ClusterName, "whitelist", zwl)
	}
	return a, inner, nil
}

// ACLsPath is the ACL file next to the users file usersPath.
func ACLsPath(usersPath string) string {
	return filepath.Join(filepath.Dir(usersPath), ACLsFile)
}
