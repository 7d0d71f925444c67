package auth

import (
	"fmt"
	"net/netip"
	"strings"
)

// ResourceType is Java's ResourceType (codes as Java's enum).
type ResourceType uint8

const (
	ResAny       ResourceType = 1 // "*": every resource
	ResCluster   ResourceType = 2
	ResNamespace ResourceType = 3
	ResTopic     ResourceType = 4
	ResGroup     ResourceType = 5
)

// String returns Java's name of the type ("Topic").
func (t ResourceType) String() string {
	switch t {
	case ResAny:
		return "Any"
	case ResCluster:
		return "Cluster"
	case ResNamespace:
		return "Namespace"
	case ResTopic:
		return "Topic"
	case ResGroup:
		return "Group"
	}
	return "Unknown"
}

func parseResourceType(s string) (ResourceType, bool) {
	for t := ResAny; t <= ResGroup; t++ {
		if strings.EqualFold(s, t.String()) {
			return t, true
		}
	}
	return 0, false
}

// ResourcePattern is Java's ResourcePattern.
type ResourcePattern uint8

const (
	PatternAny      ResourcePattern = 1 // "Topic:*"
	PatternLiteral  ResourcePattern = 2 // "Topic:abc"
	PatternPrefixed ResourcePattern = 3 // "Topic:abc*"
)

// Resource is one policy entry's resource (Java's Resource), written as
// its key: "*", "Topic:*", "Topic:abc", "Topic:abc*".
type Resource struct {
	Type    ResourceType
	Name    string // "" for the ANY pattern
	Pattern ResourcePattern
}

// ParseResource reads a resource key as Java's Resource.of does: "*" is
// any resource; "<Type>:<name>" with a type name in any case; a name of
// "*" is every resource of the type, a name ending in "*" a prefix.
func ParseResource(key string) (Resource, bool) {
	key = strings.TrimSpace(key)
	if key == "" {
		return Resource{}, false
	}
	if key == "*" {
		return Resource{Type: ResAny, Pattern: PatternAny}, true
	}
	typ, name, _ := strings.Cut(key, ":")
	t, ok := parseResourceType(typ)
	if !ok {
		return Resource{}, false
	}
	switch {
	case name == "*":
		return Resource{Type: t, Pattern: PatternAny}, true
	case strings.HasSuffix(name, "*"):
		// Java keeps what precedes the first '*' (substringBefore).
		name, _, _ = strings.Cut(name, "*")
		return Resource{Type: t, Name: name, Pattern: PatternPrefixed}, true
	}
	return Resource{Type: t, Name: name, Pattern: PatternLiteral}, true
}

// Key returns the resource as Java writes it (getResourceKey).
func (r Resource) Key() string {
	if r.Type == ResAny {
		return "*"
	}
	switch r.Pattern {
	case PatternAny:
		return r.Type.String() + ":*"
	case PatternPrefixed:
		return r.Type.String() + ":" + r.Name + "*"
	}
	return r.Type.String() + ":" + r.Name
}

// matches is Java's Resource.isMatch against a requested (literal)
// resource.
func (r *Resource) matches(t ResourceType, name string) bool {
	if r.Type == ResAny {
		return true
	}
	if r.Type != t {
		return false
	}
	switch r.Pattern {
	case PatternAny:
		return true
	case PatternLiteral:
		return name == r.Name
	case PatternPrefixed:
		return strings.HasPrefix(name, r.Name)
	}
	return false
}

// Action is one of Java's Action values; ActionSet holds several, one
// bit per Java code.
type Action uint8

const (
	ActionAll    Action = 1 // every action
	ActionAny    Action = 2 // only in a request: any entry action matches; never stored
	ActionPub    Action = 3
	ActionSub    Action = 4
	ActionCreate Action = 5
	ActionUpdate Action = 6
	ActionDelete Action = 7
	ActionGet    Action = 8
	ActionList   Action = 9
)

var actionNames = [...]string{ActionAll: "All", ActionAny: "Any", ActionPub: "Pub", ActionSub: "Sub",
	ActionCreate: "Create", ActionUpdate: "Update", ActionDelete: "Delete", ActionGet: "Get", ActionList: "List"}

// String returns Java's name of the action ("Pub").
func (a Action) String() string {
	if int(a) < len(actionNames) && actionNames[a] != "" {
		return actionNames[a]
	}
	return "Unknown"
}

// ParseAction accepts Java's action names in any case.
func ParseAction(s string) (Action, bool) {
	for a := ActionAll; a <= ActionList; a++ {
		if strings.EqualFold(s, actionNames[a]) {
			return a, true
		}
	}
	return 0, false
}

// ActionSet is a set of actions.
type ActionSet uint16

// Actions returns the set of as.
func Actions(as ...Action) ActionSet {
	var s ActionSet
	for _, a := range as {
		s |= 1 << a
	}
	return s
}

// Has reports whether a is in s.
func (s ActionSet) Has(a Action) bool { return s&(1<<a) != 0 }

// List returns the actions of s in code order.
func (s ActionSet) List() []Action {
	var out []Action
	for a := ActionAll; a <= ActionList; a++ {
		if s.Has(a) {
			out = append(out, a)
		}
	}
	return out
}

// Names returns Java's names of the actions of s, in code order.
func (s ActionSet) Names() []string {
	var out []string
	for _, a := range s.List() {
		out = append(out, a.String())
	}
	return out
}

// matches is Java's PolicyEntry.isMatchAction: the entry (s) grants one of
// the requested actions, or ALL; a request for ANY matches any entry
// with actions.
func (s ActionSet) matches(req ActionSet) bool {
	if s == 0 {
		return false
	}
	if req.Has(ActionAny) || s.Has(ActionAll) {
		return true
	}
	return s&req != 0
}

// Decision is Java's Decision.
type Decision uint8

const (
	Allow Decision = 1
	Deny  Decision = 2
)

// String returns Java's name ("Allow", "Deny").
func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return "Unknown"
}

// ParseDecision accepts Java's names in any case.
func ParseDecision(s string) (Decision, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "allow":
		return Allow, true
	case "deny":
		return Deny, true
	}
	return 0, false
}

// PolicyType is Java's PolicyType: the DEFAULT policy is consulted only
// when no CUSTOM entry matches a request.
type PolicyType uint8

const (
	Custom  PolicyType = 1
	Default PolicyType = 2
)

// String returns Java's name ("Custom", "Default").
func (p PolicyType) String() string {
	switch p {
	case Custom:
		return "Custom"
	case Default:
		return "Default"
	}
	return "Unknown"
}

// ParsePolicyType accepts Java's names in any case.
func ParsePolicyType(s string) (PolicyType, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "custom":
		return Custom, true
	case "default":
		return Default, true
	}
	return 0, false
}

// Entry is one policy entry (Java's PolicyEntry): a resource, the
// actions it grants or denies, the source addresses it applies to (none:
// every address) and the decision.
type Entry struct {
	Resource  Resource
	Actions   ActionSet
	SourceIPs []string // as given: an IP or a CIDR
	Decision  Decision

	ranges []netip.Prefix // SourceIPs parsed (a single IP is a full-length prefix)
}

// Policy is one policy of an ACL (Java's Policy).
type Policy struct {
	Type    PolicyType
	Entries []Entry
}

// ACL is the policies of one subject (Java's Acl). rocketd knows one
// subject type, as Java: users ("User:<name>").
type ACL struct {
	Username string
	Policies []Policy
}

// Subject returns the ACL's subject key, "User:<name>".
func (a *ACL) Subject() string { return subjectPrefix + a.Username }

const subjectPrefix = "User:"

// ParseSubject returns the username of a subject key "User:<name>" (the
// type in any case, as Java's SubjectType.getByName).
func ParseSubject(key string) (string, bool) {
	typ, name, found := strings.Cut(key, ":")
	if !found || !strings.EqualFold(typ, "User") || strings.TrimSpace(name) == "" {
		return "", false
	}
	return name, true
}

// policy returns the policy of type t (nil when absent).
func (a *ACL) policy(t PolicyType) *Policy {
	for i := range a.Policies {
		if a.Policies[i].Type == t {
			return &a.Policies[i]
		}
	}
	return nil
}

// merge is Java's Acl.updatePolicy: each policy of add replaces the
// entries of the same resource in the policy of its type, and adds the
// others; a policy type a lacks is added whole.
func (a *ACL) merge(add []Policy) {
	for _, np := range add {
		old := a.policy(np.Type)
		if old == nil {
			a.Policies = append(a.Policies, clonePolicy(np))
			continue
		}
	next:
		for _, ne := range np.Entries {
			for i := range old.Entries {
				if old.Entries[i].Resource == ne.Resource {
					old.Entries[i] = ne
					continue next
				}
			}
			old.Entries = append(old.Entries, ne)
		}
	}
}

// deleteEntry is Java's Acl.deletePolicy: it removes the entry of r from
// the policy of type t, and the policy when it is left empty.
func (a *ACL) deleteEntry(t PolicyType, r Resource) {
	p := a.policy(t)
	if p == nil {
		return
	}
	for i := range p.Entries {
		if p.Entries[i].Resource == r {
			p.Entries = append(p.Entries[:i:i], p.Entries[i+1:]...)
			break
		}
	}
	if len(p.Entries) == 0 {
		out := a.Policies[:0:0]
		for _, q := range a.Policies {
			if q.Type != t {
				out = append(out, q)
			}
		}
		a.Policies = out
	}
}

func clonePolicy(p Policy) Policy {
	p.Entries = append([]Entry(nil), p.Entries...)
	return p
}

func cloneACL(a ACL) ACL {
	ps := make([]Policy, len(a.Policies))
	for i, p := range a.Policies {
		ps[i] = clonePolicy(p)
	}
	a.Policies = ps
	return a
}

// Validate reports what the broker would refuse in the ACL, with Java's
// texts (the policy types default to CUSTOM).
func (a *ACL) Validate() error { return a.validate() }

// validate is Java's AuthorizationMetadataManagerImpl.validate, with its
// texts, after the policy types were defaulted; it parses the source
// ranges.
func (a *ACL) validate() error {
	if len(a.Policies) == 0 {
		return invalid("The policies is empty.")
	}
	for pi := range a.Policies {
		p := &a.Policies[pi]
		if p.Type == 0 {
			p.Type = Custom
		}
		if len(p.Entries) == 0 {
			return invalid("The policy entries is empty.")
		}
		for ei := range p.Entries {
			if err := p.Entries[ei].validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Entry) validate() error {
	if e.Resource.Type == 0 {
		return invalid("The resource is null.")
	}
	if e.Resource.Pattern == 0 {
		return invalid("The resource pattern is null.")
	}
	if e.Actions == 0 {
		return invalid("The actions is empty.")
	}
	if e.Actions.Has(ActionAny) {
		return invalid("The actions can not be Any.")
	}
	e.ranges = e.ranges[:0:0]
	for _, s := range e.SourceIPs {
		if strings.TrimSpace(s) == "" {
			return invalid("The source ip is empty.")
		}
		p, err := ParseSourceIP(s)
		if err != nil {
			return invalid("The source ip is invalid.")
		}
		e.ranges = append(e.ranges, p)
	}
	if e.Decision != Allow && e.Decision != Deny {
		return invalid("The decision is null or illegal.")
	}
	return nil
}

// ParseSourceIP reads one source address of a policy entry as Java's
// IPAddressUtils.isValidIPOrCidr accepts it: an IPv4 or IPv6 address, or
// a CIDR range of either. Java 5.3 refuses ACL 1.0's "192.168.1.*" and
// "192.168.1.1-10" forms here, and so does rocketd.
func ParseSourceIP(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("source ip %q: zones are not accepted", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
