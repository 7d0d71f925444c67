package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
)

// userPasswordEnv holds the password of the user created or updated: a
// flag would show it in ps and shell history.
const userPasswordEnv = "ROCKETCTL_USER_PASSWORD"

// authTarget is the -c/-b choice of the user and ACL commands (mqadmin's):
// every master of a cluster, or one broker.
type authTarget struct{ cluster, broker string }

func (t *authTarget) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&t.cluster, "cluster", "c", "", "every master of this cluster (default: the only cluster)")
	cmd.Flags().StringVarP(&t.broker, "broker", "b", "", "this broker address only (host:port)")
}

// brokers returns name -> address of the targets.
func (c *ctl) authBrokers(t authTarget) (map[string]string, error) {
	if t.broker != "" {
		if t.cluster != "" {
			return nil, errors.New("give -c or -b, not both")
		}
		return map[string]string{t.broker: t.broker}, nil
	}
	return c.clusterMasters(t.cluster)
}

// authWrite sends one change to every target.
func (c *ctl) authWrite(what string, t authTarget, code int32, ext map[string]string, body []byte) error {
	targets, err := c.authBrokers(t)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(targets)) {
		if _, err := c.invokeOK(what, targets[name], code, ext, body); err != nil {
			return err
		}
		if !c.json {
			fmt.Fprintf(c.out, "%s: done on %s (%s)\n", what, name, targets[name])
		}
	}
	if c.json {
		return c.writeJSON(map[string]any{"done": what, "brokers": targets})
	}
	return nil
}

// authRead asks every target and returns each body (nil: none) by broker
// name.
func (c *ctl) authRead(what string, t authTarget, code int32, ext map[string]string) (map[string][]byte, map[string]string, error) {
	targets, err := c.authBrokers(t)
	if err != nil {
		return nil, nil, err
	}
	out := map[string][]byte{}
	for name, addr := range targets {
		resp, err := c.invokeOK(what, addr, code, ext, nil)
		if err != nil {
			return nil, nil, err
		}
		out[name] = resp.Body
	}
	return out, targets, nil
}

// printAuthRead prints the answers of authRead: JSON keyed by broker, or
// per broker the lines lines() makes of a body.
func (c *ctl) printAuthRead(bodies map[string][]byte, targets map[string]string, decode func([]byte) (any, []string, error)) error {
	all := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(bodies)) {
		v, lines, err := decode(bodies[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		all[name] = v
		if !c.json {
			fmt.Fprintf(c.out, "broker %s (%s):\n", name, targets[name])
			for _, l := range lines {
				fmt.Fprintf(c.out, "  %s\n", l)
			}
		}
	}
	if c.json {
		return c.writeJSON(all)
	}
	return nil
}

// userBody is Java's UserInfo.
type userBody struct {
	Username   string `json:"username"`
	Password   string `json:"password,omitempty"`
	UserType   string `json:"userType,omitempty"`
	UserStatus string `json:"userStatus,omitempty"`
}

func (u userBody) line() string {
	return fmt.Sprintf("%-20s type %-6s status %s", u.Username, u.UserType, u.UserStatus)
}

func newUserCommand(c *ctl) *cobra.Command {
	user := &cobra.Command{Use: "user", Short: "Manage the users of brokers with authentication (AUTH_*_USER, mqadmin's createUser ...)"}
	var (
		t                  authTarget
		name, typ, status  string
		filter             string
		passwordFromStdin  bool
		withPasswordOutput bool
	)
	password := func(required bool) (string, error) {
		if passwordFromStdin {
			line, err := bufio.NewReader(os.Stdin).ReadString('\n')
			if err != nil && line == "" {
				return "", fmt.Errorf("read the password from stdin: %w", err)
			}
			return strings.TrimRight(line, "\r\n"), nil
		}
		p := os.Getenv(userPasswordEnv)
		if p == "" && required {
			return "", fmt.Errorf("the password: set $%s or use --password-stdin", userPasswordEnv)
		}
		return p, nil
	}
	change := func(use, what string, code int32, required bool) *cobra.Command {
		cmd := &cobra.Command{
			Use: use, Short: what, Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				if typ != "" {
					if _, ok := auth.ParseUserType(typ); !ok {
						return fmt.Errorf("--user-type %q: want Super or Normal", typ)
					}
				}
				if status != "" {
					if _, ok := auth.ParseUserStatus(status); !ok {
						return fmt.Errorf("--user-status %q: want enable or disable", status)
					}
				}
				pw, err := password(required)
				if err != nil {
					return err
				}
				body, err := json.Marshal(userBody{Username: name, Password: pw, UserType: typ, UserStatus: status})
				if err != nil {
					return err
				}
				return c.authWrite("user "+strings.Fields(use)[0]+" "+name, t, code, map[string]string{"username": name}, body)
			},
		}
		t.register(cmd)
		cmd.Flags().StringVarP(&name, "username", "u", "", "the user's name")
		cmd.Flags().StringVarP(&typ, "user-type", "t", "", "Super or Normal (create: Normal)")
		cmd.Flags().StringVarP(&status, "user-status", "s", "", "enable or disable (create: enable)")
		cmd.Flags().BoolVar(&passwordFromStdin, "password-stdin", false, "read the password from the first line of stdin (else $"+userPasswordEnv+")")
		_ = cmd.MarkFlagRequired("username")
		return cmd
	}
	create := change("create -u NAME", "Create a user (password in $"+userPasswordEnv+" or --password-stdin)", protocol.AuthCreateUser, true)
	update := change("update -u NAME", "Change a user's password, type or status", protocol.AuthUpdateUser, false)

	del := &cobra.Command{
		Use: "delete -u NAME", Short: "Delete a user and its ACL", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return c.authWrite("user delete "+name, t, protocol.AuthDeleteUser, map[string]string{"username": name}, nil)
		},
	}
	t.register(del)
	del.Flags().StringVarP(&name, "username", "u", "", "the user's name")
	_ = del.MarkFlagRequired("username")

	decodeUsers := func(list bool) func([]byte) (any, []string, error) {
		return func(body []byte) (any, []string, error) {
			var us []userBody
			if len(body) > 0 {
				if list {
					if err := json.Unmarshal(body, &us); err != nil {
						return nil, nil, err
					}
				} else {
					var u userBody
					if err := json.Unmarshal(body, &u); err != nil {
						return nil, nil, err
					}
					us = append(us, u)
				}
			}
			var lines []string
			for i := range us {
				if !withPasswordOutput {
					us[i].Password = ""
				}
				lines = append(lines, us[i].line())
			}
			if len(lines) == 0 {
				lines = []string{"(none)"}
			}
			if !list {
				if len(us) == 0 {
					return nil, lines, nil
				}
				return us[0], lines, nil
			}
			return us, lines, nil
		}
	}
	get := &cobra.Command{
		Use: "get -u NAME", Short: "Show a user", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			bodies, targets, err := c.authRead("user get "+name, t, protocol.AuthGetUser, map[string]string{"username": name})
			if err != nil {
				return err
			}
			return c.printAuthRead(bodies, targets, decodeUsers(false))
		},
	}
	t.register(get)
	get.Flags().StringVarP(&name, "username", "u", "", "the user's name")
	_ = get.MarkFlagRequired("username")
	list := &cobra.Command{
		Use: "list", Short: "List users", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			bodies, targets, err := c.authRead("user list", t, protocol.AuthListUser, map[string]string{"filter": filter})
			if err != nil {
				return err
			}
			return c.printAuthRead(bodies, targets, decodeUsers(true))
		},
	}
	t.register(list)
	list.Flags().StringVarP(&filter, "filter", "f", "", "only names containing this")
	for _, cmd := range []*cobra.Command{get, list} {
		cmd.Flags().BoolVar(&withPasswordOutput, "show-password", false, "print the passwords the broker answers with")
	}
	user.AddCommand(create, update, del, get, list)
	return user
}

func aclLines(info auth.AclInfo) []string {
	var lines []string
	for _, p := range info.Policies {
		for _, e := range p.Entries {
			l := fmt.Sprintf("%s %-8s %-24s %-6s %s", info.Subject, p.PolicyType, e.Resource, e.Decision, strings.Join(e.Actions, ","))
			if len(e.SourceIPs) > 0 {
				l += " from " + strings.Join(e.SourceIPs, ",")
			}
			lines = append(lines, l)
		}
	}
	return lines
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func newACLCommand(c *ctl) *cobra.Command {
	acl := &cobra.Command{Use: "acl", Short: "Manage the ACLs of brokers with authorization (AUTH_*_ACL, mqadmin's createAcl ...)"}
	var (
		t                                authTarget
		subject, resources, actions, ips string
		decision, policyType, resource   string
		subjectFilter, resourceFilter    string
	)
	change := func(use, what string, code int32) *cobra.Command {
		cmd := &cobra.Command{
			Use: use, Short: what, Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				info := auth.AclInfo{Subject: subject, Policies: []auth.PolicyInfo{{PolicyType: policyType}}}
				for _, r := range splitList(resources) {
					info.Policies[0].Entries = append(info.Policies[0].Entries, auth.PolicyEntryInfo{
						Resource: r, Actions: splitList(actions), SourceIPs: splitList(ips), Decision: decision})
				}
				// Checked here as the broker will, so a typo fails before
				// anything is sent to a cluster.
				parsed, err := auth.ACLFromInfo(info, "")
				if err != nil {
					return err
				}
				if err := parsed.Validate(); err != nil {
					return err
				}
				body, err := json.Marshal(info)
				if err != nil {
					return err
				}
				return c.authWrite("acl "+strings.Fields(use)[0]+" "+subject, t, code, map[string]string{"subject": subject}, body)
			},
		}
		t.register(cmd)
		f := cmd.Flags()
		f.StringVarP(&subject, "subject", "s", "", "the subject, User:<name>")
		f.StringVarP(&resources, "resources", "r", "", "resources, comma-separated: Topic:t, Topic:t*, Group:*, Cluster:c, *")
		f.StringVarP(&actions, "actions", "a", "", "actions, comma-separated: All, Pub, Sub, Create, Update, Delete, Get, List")
		f.StringVarP(&ips, "source-ip", "i", "", "source addresses, comma-separated IPs or CIDRs (default: any)")
		f.StringVarP(&decision, "decision", "d", "", "Allow or Deny")
		f.StringVar(&policyType, "policy-type", "", "Custom (default) or Default")
		for _, req := range []string{"subject", "resources", "actions", "decision"} {
			_ = cmd.MarkFlagRequired(req)
		}
		return cmd
	}
	create := change("create -s User:NAME -r RES -a ACTIONS -d DECISION", "Create an ACL, or add entries to it", protocol.AuthCreateACL)
	update := change("update -s User:NAME -r RES -a ACTIONS -d DECISION", "Replace or add the entries of the given resources", protocol.AuthUpdateACL)

	del := &cobra.Command{
		Use: "delete -s User:NAME [-r RESOURCE]", Short: "Delete one resource's entry, or the whole ACL", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ext := map[string]string{"subject": subject}
			if resource != "" {
				ext["resource"] = resource
			}
			if policyType != "" {
				ext["policyType"] = policyType
			}
			return c.authWrite("acl delete "+subject, t, protocol.AuthDeleteACL, ext, nil)
		},
	}
	t.register(del)
	del.Flags().StringVarP(&subject, "subject", "s", "", "the subject, User:<name>")
	del.Flags().StringVarP(&resource, "resource", "r", "", "only this resource's entry")
	del.Flags().StringVar(&policyType, "policy-type", "", "the entry's policy: Custom (default) or Default")
	_ = del.MarkFlagRequired("subject")

	decode := func(list bool) func([]byte) (any, []string, error) {
		return func(body []byte) (any, []string, error) {
			var infos []auth.AclInfo
			if len(body) > 0 {
				if list {
					if err := json.Unmarshal(body, &infos); err != nil {
						return nil, nil, err
					}
				} else {
					var info auth.AclInfo
					if err := json.Unmarshal(body, &info); err != nil {
						return nil, nil, err
					}
					infos = append(infos, info)
				}
			}
			var lines []string
			for _, info := range infos {
				lines = append(lines, aclLines(info)...)
			}
			if len(lines) == 0 {
				lines = []string{"(none)"}
			}
			if !list {
				if len(infos) == 0 {
					return nil, lines, nil
				}
				return infos[0], lines, nil
			}
			return infos, lines, nil
		}
	}
	get := &cobra.Command{
		Use: "get -s User:NAME", Short: "Show a subject's ACL", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			bodies, targets, err := c.authRead("acl get "+subject, t, protocol.AuthGetACL, map[string]string{"subject": subject})
			if err != nil {
				return err
			}
			return c.printAuthRead(bodies, targets, decode(false))
		},
	}
	t.register(get)
	get.Flags().StringVarP(&subject, "subject", "s", "", "the subject, User:<name>")
	_ = get.MarkFlagRequired("subject")
	list := &cobra.Command{
		Use: "list", Short: "List ACLs", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			bodies, targets, err := c.authRead("acl list", t, protocol.AuthListACL,
				map[string]string{"subjectFilter": subjectFilter, "resourceFilter": resourceFilter})
			if err != nil {
				return err
			}
			return c.printAuthRead(bodies, targets, decode(true))
		},
	}
	t.register(list)
	list.Flags().StringVarP(&subjectFilter, "subject-filter", "s", "", "only subjects containing this")
	list.Flags().StringVarP(&resourceFilter, "resource-filter", "r", "", "only entries whose resource contains this")
	acl.AddCommand(create, update, del, get, list)
	return acl
}
