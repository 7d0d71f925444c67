package auth

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rocketd/rocketd/internal/vfs"
)

// plainAccessData is ACL 1.0's plain_acl.yml (Java's PlainAccessData).
type plainAccessData struct {
	GlobalWhiteRemoteAddresses []string            `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []plainAccessConfig `yaml:"accounts"`
}

// plainAccessConfig is one ACL 1.0 account (Java's PlainAccessConfig).
type plainAccessConfig struct {
	AccessKey          string   `yaml:"accessKey"`
	SecretKey          string   `yaml:"secretKey"`
	WhiteRemoteAddress string   `yaml:"whiteRemoteAddress"`
	Admin              bool     `yaml:"admin"`
	DefaultTopicPerm   string   `yaml:"defaultTopicPerm"`
	DefaultGroupPerm   string   `yaml:"defaultGroupPerm"`
	TopicPerms         []string `yaml:"topicPerms"`
	GroupPerms         []string `yaml:"groupPerms"`
}

// PlainACLFiles returns the ACL 1.0 files Java's PlainPermissionManager
// reads under home ($ROCKETMQ_HOME): every .yml or .yaml file under
// conf/acl, then conf/plain_acl.yml. Missing ones are left out.
func PlainACLFiles(fsys vfs.FS, home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	dir := filepath.Join(home, "conf", "acl")
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	def := filepath.Join(home, "conf", "plain_acl.yml")
	if _, err := vfs.ReadFile(fsys, def); err == nil && !slices.Contains(out, def) {
		out = append(out, def)
	}
	return out
}

// plainACLFilesFor returns the files to import: plainAclFile when set,
// else Java's places under $ROCKETMQ_HOME.
func plainACLFilesFor(fsys vfs.FS, file string) ([]string, error) {
	if file != "" {
		return []string{file}, nil
	}
	home := os.Getenv("ROCKETMQ_HOME")
	if home == "" {
		return nil, errors.New("auth: migrateAuthFromV1Enabled=true: set plainAclFile or ROCKETMQ_HOME (Java reads $ROCKETMQ_HOME/conf/plain_acl.yml)")
	}
	return PlainACLFiles(fsys, home), nil
}

// MigrateResult counts what MigrateV1 did.
type MigrateResult struct {
	Users, ACLs, Skipped, Failed int
}

// MigrateV1 imports the ACL 1.0 accounts of files as Java's AuthMigrator
// does: each account whose user does not exist yet becomes a user
// (secretKey the password; SUPER when admin, else NORMAL) and, when it
// has permissions, an ACL: topicPerms and groupPerms ("name=PUB") a
// CUSTOM policy of literal resources, defaultTopicPerm and
// defaultGroupPerm a DEFAULT policy on Topic:* and Group:*. A permission
// maps as Java's: PUB, SUB, PUB|SUB (SUB|PUB) allow those actions, DENY
// denies all, anything else allows all. An account listed in several
// files counts once (the first). whiteRemoteAddress and
// globalWhiteRemoteAddresses are not imported, as in Java; they are
// logged. A file that cannot be read or parsed is an error; an account
// that cannot be imported is logged and skipped, as Java does.
func MigrateV1(fsys vfs.FS, files []string, users *Users, acls *ACLs, log *slog.Logger) (MigrateResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var res MigrateResult
	seen := map[string]bool{}
	for _, path := range files {
		data, err := vfs.ReadFile(fsys, path)
		if err != nil {
			return res, fmt.Errorf("auth: migrate ACL 1.0: %w", err)
		}
		var doc plainAccessData
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return res, fmt.Errorf("auth: migrate ACL 1.0: %s: %w", path, err)
		}
		if len(doc.GlobalWhiteRemoteAddresses) > 0 {
			log.Warn("auth: ACL 1.0 globalWhiteRemoteAddresses are not migrated (as in Java 5.3): grant those clients a user",
				"file", path, "addresses", doc.GlobalWhiteRemoteAddresses)
		}
		for _, acct := range doc.Accounts {
			if seen[acct.AccessKey] {
				continue
			}
			seen[acct.AccessKey] = true
			created, err := migrateAccount(acct, users, acls)
			switch {
			case err != nil:
				res.Failed++
				log.Error("auth: ACL 1.0 account not migrated", "file", path, "accessKey", acct.AccessKey, "err", err)
				continue
			case !created:
				res.Skipped++
				continue
			}
			res.Users++
			if _, ok := acls.lookupName(acct.AccessKey); ok {
				res.ACLs++
			}
			if acct.WhiteRemoteAddress != "" {
				log.Warn("auth: ACL 1.0 whiteRemoteAddress is not migrated (as in Java 5.3)",
					"accessKey", acct.AccessKey, "whiteRemoteAddress", acct.WhiteRemoteAddress)
			}
		}
	}
	return res, nil
}

// lookupName reports whether user name has an ACL.
func (a *ACLs) lookupName(name string) (*ACL, bool) {
	acl := a.lookup(name)
	return acl, acl != nil
}

// migrateAccount is AuthMigrator.doMigrate for one account: created is
// false when the user exists.
func migrateAccount(acct plainAccessConfig, users *Users, acls *ACLs) (created bool, err error) {
	if _, exists := users.Get(acct.AccessKey); exists {
		return false, nil
	}
	typ := Normal
	if acct.Admin {
		typ = Super
	}
	if err := users.Create(User{Username: acct.AccessKey, Password: acct.SecretKey, UserType: typ}); err != nil {
		return false, err
	}
	acl := v1ACL(acct)
	if len(acl.Policies) == 0 {
		return true, nil
	}
	if err := acls.Put(acl); err != nil {
		return true, fmt.Errorf("user created, ACL not: %w", err)
	}
	return true, nil
}

// v1ACL is AuthMigrator.createAcl's ACL of an account.
func v1ACL(acct plainAccessConfig) ACL {
	acl := ACL{Username: acct.AccessKey}
	var custom []Entry
	for _, perms := range []struct {
		list []string
		typ  ResourceType
	}{{acct.TopicPerms, ResTopic}, {acct.GroupPerms, ResGroup}} {
		for _, tp := range perms.list {
			name, perm, ok := splitPerm(tp)
			if !ok {
				continue
			}
			if perms.typ == ResGroup && isRetryTopic(name) {
				name = strings.TrimPrefix(name, retryPrefix)
			}
			custom = append(custom, Entry{
				Resource: Resource{Type: perms.typ, Name: name, Pattern: PatternLiteral},
				Actions:  v1Actions(perm), Decision: v1Decision(perm),
			})
		}
	}
	if len(custom) > 0 {
		acl.Policies = append(acl.Policies, Policy{Type: Custom, Entries: custom})
	}
	var def []Entry
	for _, d := range []struct {
		perm string
		typ  ResourceType
	}{{acct.DefaultTopicPerm, ResTopic}, {acct.DefaultGroupPerm, ResGroup}} {
		perm := strings.TrimSpace(d.perm)
		if perm == "" {
			continue
		}
		def = append(def, Entry{
			Resource: Resource{Type: d.typ, Pattern: PatternAny},
			Actions:  v1Actions(perm), Decision: v1Decision(perm),
		})
	}
	if len(def) > 0 {
		acl.Policies = append(acl.Policies, Policy{Type: Default, Entries: def})
	}
	return acl
}

// splitPerm splits "name=PERM" as Java's StringUtils.split on '=' (empty
// parts dropped; exactly two parts wanted), both sides trimmed.
func splitPerm(s string) (name, perm string, ok bool) {
	var parts []string
	for _, p := range strings.Split(s, "=") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) != 2 {
		return "", "", false
	}
	return strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), true
}

// v1Actions is AuthMigrator.parseActions.
func v1Actions(perm string) ActionSet {
	switch strings.TrimSpace(perm) {
	case "PUB":
		return Actions(ActionPub)
	case "SUB":
		return Actions(ActionSub)
	case "PUB|SUB", "SUB|PUB":
		return Actions(ActionPub, ActionSub)
	}
	return Actions(ActionAll) // DENY and anything else
}

// v1Decision is AuthMigrator.parseDecision (the permission untrimmed, as
// Java compares it).
func v1Decision(perm string) Decision {
	if strings.TrimSpace(perm) == "" || perm == "DENY" {
		return Deny
	}
	return Allow
}
