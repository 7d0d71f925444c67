package auth

import (
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/rocketd/rocketd/internal/remoting"
)

// Authorizer checks that the user a request names may do what the
// request does (Java's AuthorizationEvaluator with the default provider:
// UserAuthorizationHandler, then AclAuthorizationHandler).
type Authorizer struct {
	users     *Users
	acls      *ACLs
	whitelist []int32 // authorizationWhitelist
	cluster   string  // the Cluster resource of cluster-wide codes
}

// NewAuthorizer returns an Authorizer over users and acls; cluster names
// the server's cluster (brokerClusterName), requests with a code in
// whitelist are not checked.
func NewAuthorizer(users *Users, acls *ACLs, cluster string, whitelist []int32) *Authorizer {
	return &Authorizer{users: users, acls: acls, cluster: cluster, whitelist: slices.Clone(whitelist)}
}

// ACLs is the table the Authorizer reads.
func (z *Authorizer) ACLs() *ACLs { return z.acls }

// Remarks of refusals that name no resource, Java's texts.
const (
	remarkAuthzFailed = "Authorization failed. Please verify your access rights and try again."
	remarkBadContext  = "parse authorization context error."
)

// source is the address a request came from, parsed once and only when
// a policy entry or a refusal needs it.
type source struct {
	host   string // as in refusals: the IP without the port
	addr   netip.Addr
	parsed bool
}

func sourceOf(remoteAddr string) source {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	return source{host: host}
}

func (s *source) ip() (netip.Addr, bool) {
	if !s.parsed {
		s.parsed = true
		if a, err := netip.ParseAddr(s.host); err == nil {
			s.addr = a.Unmap()
		}
	}
	return s.addr, s.addr.IsValid()
}

// sourceKey keys a connection's source host in its values.
type sourceKey struct{}

// parsedSource is sourceOf with the address parsed.
func parsedSource(remoteAddr string) source {
	s := sourceOf(remoteAddr)
	s.ip()
	return s
}

// connSource returns the source of conn's requests, parsed once and
// cached on the connection: a policy entry with source IPs then costs no
// address parse per request.
func connSource(conn *remoting.Conn) source {
	if conn == nil {
		return source{}
	}
	if s, ok := conn.Value(sourceKey{}).(source); ok {
		return s
	}
	s := parsedSource(conn.RemoteAddr())
	conn.SetValue(sourceKey{}, s)
	return s
}

// Authorize checks req, sent from remoteAddr ("ip:port"), and returns the
// reason of a refusal.
func (z *Authorizer) Authorize(req *remoting.Command, remoteAddr string) (remark string, ok bool) {
	src := sourceOf(remoteAddr)
	return z.authorize(extView{req: req}, nil, &src)
}

// authorize checks the request v reads for the user e (nil: the one its
// AccessKey names).
func (z *Authorizer) authorize(v extView, e *userEntry, src *source) (string, bool) {
	if slices.Contains(z.whitelist, v.req.Code) {
		return "", true
	}
	var buf [4]check
	checks, err := requestChecks(buf[:0], v, z.cluster)
	if err != nil {
		return remarkBadContext, false
	}
	if len(checks) == 0 {
		return "", true
	}
	if e == nil {
		ak := v.field(FieldAccessKey)
		if ak == "" {
			return remarkAuthzFailed, false
		}
		if e = z.users.lookup(ak); e == nil {
			return "User:" + ak + " not found.", false
		}
	}
	return z.decide(e, checks, src)
}

// decide checks that the user e may do every check.
func (z *Authorizer) decide(e *userEntry, checks []check, src *source) (string, bool) {
	if e.user.UserType == Super {
		return "", true
	}
	acl := z.acls.lookup(e.user.Username)
	for i := range checks {
		c := &checks[i]
		if acl == nil {
			return refusal(e.user.Username, c, src, "no matched policies."), false
		}
		best := acl.bestEntry(c, src)
		if best == nil {
			return refusal(e.user.Username, c, src, "no matched policies."), false
		}
		if best.Decision == Deny {
			return refusal(e.user.Username, c, src, "the decision is deny."), false
		}
	}
	return "", true
}

// refusal is Java's AclAuthorizationHandler message.
func refusal(user string, c *check, src *source, detail string) string {
	return "User:" + user + " has no permission to access " + c.key() + " from " + src.host + ", " + detail
}

// bestEntry is Java's matchPolicyEntries: the entries of the CUSTOM
// policy that match the resource, one of the actions and the source;
// when there are none, those of the DEFAULT policy; of them the most
// specific resource (a literal name, then the longest prefix, then a
// type's every resource, then "*"). Between equally specific entries
// (the same resource listed twice) DENY wins, as Java's comparator says
// it should.
func (a *ACL) bestEntry(c *check, src *source) *Entry {
	for _, pt := range [2]PolicyType{Custom, Default} {
		p := a.policy(pt)
		if p == nil {
			continue
		}
		var best *Entry
		for i := range p.Entries {
			e := &p.Entries[i]
			// Resource.matches and ActionSet.matches, written out: the
			// loop runs for every entry of every request.
			if r := &e.Resource; r.Type != ResAny {
				if r.Type != c.typ {
					continue
				}
				switch r.Pattern {
				case PatternAny:
				case PatternLiteral:
					if c.name != r.Name {
						continue
					}
				case PatternPrefixed:
					if !strings.HasPrefix(c.name, r.Name) {
						continue
					}
				default:
					continue
				}
			}
			if a := e.Actions; a == 0 || a&c.actions == 0 && !c.actions.Has(ActionAny) && !a.Has(ActionAll) {
				continue
			}
			if len(e.ranges) > 0 && !e.matchesSource(src) {
				continue
			}
			if best == nil || compareEntries(e, best) < 0 {
				best = e
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}

// compareEntries is Java's comparePolicyEntries (negative: x first), with
// DENY first on a tie.
func compareEntries(x, y *Entry) int {
	r1, r2 := &x.Resource, &y.Resource
	c := 0
	switch {
	case r1.Type != r2.Type:
		if r1.Type == ResAny {
			c = 1
		}
		if r2.Type == ResAny {
			c = -1
		}
	case r1.Pattern == r2.Pattern:
		if r1.Pattern == PatternPrefixed {
			c = len(r2.Name) - len(r1.Name)
		}
	default:
		c = patternRank(r1.Pattern) - patternRank(r2.Pattern)
	}
	if c != 0 {
		return c
	}
	switch {
	case x.Decision == y.Decision:
		return 0
	case x.Decision == Deny:
		return -1
	}
	return 1
}

func patternRank(p ResourcePattern) int {
	switch p {
	case PatternLiteral:
		return 0
	case PatternPrefixed:
		return 1
	}
	return 2
}

// matchesSource is Java's isMatchEnvironment: no source IPs match every
// address; otherwise the request's must lie in one of them.
func (e *Entry) matchesSource(src *source) bool {
	if len(e.ranges) == 0 {
		return true
	}
	addr, ok := src.ip()
	if !ok {
		return false
	}
	for _, p := range e.ranges {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
