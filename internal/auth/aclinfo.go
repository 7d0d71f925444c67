package auth

// AclInfo is Java's AclInfo: the body of AUTH_CREATE_ACL, AUTH_UPDATE_ACL
// and AUTH_GET_ACL (a list of them for AUTH_LIST_ACL), and the record of
// acls.json (doc.go). Types, patterns, actions and decisions travel by
// name.
type AclInfo struct {
	Subject  string       `json:"subject,omitempty"`
	Policies []PolicyInfo `json:"policies,omitempty"`
}

// PolicyInfo is Java's AclInfo.PolicyInfo.
type PolicyInfo struct {
	PolicyType string            `json:"policyType,omitempty"`
	Entries    []PolicyEntryInfo `json:"entries,omitempty"`
}

// PolicyEntryInfo is Java's AclInfo.PolicyEntryInfo.
type PolicyEntryInfo struct {
	Resource  string   `json:"resource,omitempty"`
	Actions   []string `json:"actions,omitempty"`
	SourceIPs []string `json:"sourceIps,omitempty"`
	Decision  string   `json:"decision,omitempty"`
}

// Info returns the ACL as Java's AclConverter.convertAcl writes it.
func (a *ACL) Info() AclInfo {
	out := AclInfo{Subject: a.Subject()}
	for _, p := range a.Policies {
		pi := PolicyInfo{PolicyType: p.Type.String()}
		for _, e := range p.Entries {
			pi.Entries = append(pi.Entries, PolicyEntryInfo{
				Resource:  e.Resource.Key(),
				Actions:   e.Actions.Names(),
				SourceIPs: append([]string(nil), e.SourceIPs...),
				Decision:  e.Decision.String(),
			})
		}
		out.Policies = append(out.Policies, pi)
	}
	return out
}

// ACLFromInfo is Java's AclConverter.convertAcl: an unknown action name is
// skipped, an unknown resource, decision or policy type is left unset for
// validation to refuse (the policy type then defaults to CUSTOM). The
// subject is the info's when it parses, else subject (the request
// header's).
func ACLFromInfo(info AclInfo, subject string) (ACL, error) {
	name, ok := ParseSubject(info.Subject)
	if !ok { // Java: a body subject that does not parse gives way to the header's
		if name, ok = ParseSubject(subject); !ok {
			return ACL{}, invalid("The subject is invalid: %q (want User:<name>).", subject)
		}
	}
	acl := ACL{Username: name}
	for _, pi := range info.Policies {
		if len(pi.Entries) == 0 {
			continue // as Java's converter
		}
		pt, _ := ParsePolicyType(pi.PolicyType)
		p := Policy{Type: pt}
		for _, ei := range pi.Entries {
			var e Entry
			e.Resource, _ = ParseResource(ei.Resource)
			for _, s := range ei.Actions {
				if a, ok := ParseAction(s); ok {
					e.Actions |= Actions(a)
				}
			}
			e.SourceIPs = append([]string(nil), ei.SourceIPs...)
			e.Decision, _ = ParseDecision(ei.Decision)
			p.Entries = append(p.Entries, e)
		}
		acl.Policies = append(acl.Policies, p)
	}
	return acl, nil
}
