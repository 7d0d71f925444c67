package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/vfs"
)

// ACLsFile is the name of the ACL file, next to users.json.
const ACLsFile = "acls.json"

// aclsDoc is the ACL file's layout (doc.go).
type aclsDoc struct {
	Version int       `json:"version"`
	ACLs    []AclInfo `json:"acls"`
}

const aclsFileVersion = 1

// ACLs is the ACL table: read without locks on every request, changed
// by the admin requests, each change written to the file before it is
// visible (as Users).
type ACLs struct {
	fsys  vfs.FS
	path  string // "" keeps the table in memory only (tests)
	users *Users // an ACL's subject must be a user

	mu  sync.Mutex                 // serializes changes and file writes
	cur atomic.Pointer[aclsByUser] // copy-on-write
}

type aclsByUser = map[string]*ACL

// OpenACLs loads the ACL file at path (absent: no ACLs; a file that does
// not parse, or holds an invalid entry, is an error).
func OpenACLs(fsys vfs.FS, path string, users *Users) (*ACLs, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	a := &ACLs{fsys: fsys, path: path, users: users}
	m := aclsByUser{}
	a.cur.Store(&m)
	if path == "" {
		return a, nil
	}
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	var doc aclsDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	for _, info := range doc.ACLs {
		acl, err := ACLFromInfo(info, "")
		if err == nil {
			err = acl.validate()
		}
		if err != nil {
			return nil, fmt.Errorf("auth: %s: acl %s: %w", path, info.Subject, err)
		}
		if m[acl.Username] != nil {
			return nil, fmt.Errorf("auth: %s: acl %s listed twice", path, info.Subject)
		}
		m[acl.Username] = &acl
	}
	return a, nil
}

// lookup returns the ACL of a user (nil when none); the result is shared:
// never change it.
func (a *ACLs) lookup(username string) *ACL { return (*a.cur.Load())[username] }

// Get returns a copy of the ACL of the subject key ("User:<name>"). The
// subject must be a user (Java: "The subject is not exist.").
func (a *ACLs) Get(subject string) (ACL, bool, error) {
	name, ok := ParseSubject(subject)
	if !ok {
		return ACL{}, false, invalid("The subject is invalid: %q (want User:<name>).", subject)
	}
	if _, found := a.users.Get(name); !found {
		return ACL{}, false, invalid("The subject is not exist.")
	}
	if acl := a.lookup(name); acl != nil {
		return cloneACL(*acl), true, nil
	}
	return ACL{}, false, nil
}

// List returns the ACLs whose subject key contains subjectFilter, each
// cut down to the entries whose resource key contains resourceFilter
// unless the subject key does (Java's listAcl), sorted by subject.
func (a *ACLs) List(subjectFilter, resourceFilter string) []ACL {
	var out []ACL
	for _, acl := range *a.cur.Load() {
		key := acl.Subject()
		if strings.TrimSpace(subjectFilter) != "" && !strings.Contains(key, subjectFilter) {
			continue
		}
		c := cloneACL(*acl)
		if strings.TrimSpace(resourceFilter) != "" && !strings.Contains(key, resourceFilter) {
			var ps []Policy
			for _, p := range c.Policies {
				p.Entries = slices.DeleteFunc(p.Entries, func(e Entry) bool {
					return !strings.Contains(e.Resource.Key(), resourceFilter)
				})
				if len(p.Entries) > 0 {
					ps = append(ps, p)
				}
			}
			c.Policies = ps
		}
		if len(c.Policies) > 0 {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(x, y ACL) int { return strings.Compare(x.Username, y.Username) })
	return out
}

// Put is Java's createAcl and updateAcl (the same in 5.3): the subject
// must be a user; a new ACL is stored as given, an existing one gets the
// policies merged in (entries of the same resource replaced).
func (a *ACLs) Put(acl ACL) error {
	if err := acl.validate(); err != nil {
		return err
	}
	if _, found := a.users.Get(acl.Username); !found {
		return invalid("The subject of %s is not exist.", acl.Subject())
	}
	return a.change(func(m aclsByUser) error {
		next := cloneACL(acl)
		if old := m[acl.Username]; old != nil {
			next = cloneACL(*old)
			next.merge(acl.Policies)
		}
		m[acl.Username] = &next
		return nil
	})
}

// Delete is Java's deleteAcl: with a resource, the entry of that resource
// in the policy of type pt (CUSTOM when 0) goes, and the ACL when no
// policy is left; without one the whole ACL goes.
func (a *ACLs) Delete(subject string, pt PolicyType, res *Resource) error {
	name, ok := ParseSubject(subject)
	if !ok {
		return invalid("The subject is null.")
	}
	if pt == 0 {
		pt = Custom
	}
	if _, found := a.users.Get(name); !found {
		return invalid("The subject is not exist.")
	}
	return a.change(func(m aclsByUser) error {
		old := m[name]
		if old == nil {
			return invalid("The acl is not exist.")
		}
		if res == nil {
			delete(m, name)
			return nil
		}
		next := cloneACL(*old)
		next.deleteEntry(pt, *res)
		if len(next.Policies) == 0 {
			delete(m, name)
		} else {
			m[name] = &next
		}
		return nil
	})
}

// change applies edit to a copy of the table, writes the file, then
// publishes the copy.
func (a *ACLs) change(edit func(aclsByUser) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := *a.cur.Load()
	next := make(aclsByUser, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if err := edit(next); err != nil {
		return err
	}
	if err := a.write(next); err != nil {
		return err
	}
	a.cur.Store(&next)
	return nil
}

// write replaces the ACL file with m (doc.go); it holds a.mu across the
// fsync on purpose, as Users.write.
func (a *ACLs) write(m aclsByUser) error {
	if a.path == "" {
		return nil
	}
	doc := aclsDoc{Version: aclsFileVersion, ACLs: make([]AclInfo, 0, len(m))}
	for _, acl := range m {
		doc.ACLs = append(doc.ACLs, acl.Info())
	}
	slices.SortFunc(doc.ACLs, func(x, y AclInfo) int { return strings.Compare(x.Subject, y.Subject) })
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode acls: %w", err)
	}
	if err := vfs.MkdirAllSync(a.fsys, filepath.Dir(a.path), 0o755); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := vfs.WriteFileAtomic(a.fsys, a.path, data); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}

// Replace makes the table hold exactly acls (a slave copying its
// master's), writing the file only when something changed. An ACL that
// does not validate refuses the whole copy; one of an unknown user is
// left out.
func (a *ACLs) Replace(acls []ACL) (changed bool, err error) {
	want := make(aclsByUser, len(acls))
	for i := range acls {
		acl := cloneACL(acls[i])
		if err := acl.validate(); err != nil {
			return false, fmt.Errorf("auth: acl %s: %w", acl.Subject(), err)
		}
		if _, found := a.users.Get(acl.Username); !found {
			continue // an ACL outlived its user there (Java 5.3 deletes both); not here
		}
		if want[acl.Username] != nil {
			return false, fmt.Errorf("auth: acl %s listed twice", acl.Subject())
		}
		want[acl.Username] = &acl
	}
	err = a.change(func(m aclsByUser) error {
		same := len(m) == len(want)
		for name, old := range m {
			if w := want[name]; w == nil || !reflect.DeepEqual(w.Info(), old.Info()) {
				same = false
			}
		}
		if same {
			return errUnchanged
		}
		clear(m)
		for name, acl := range want {
			m[name] = acl
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return false, nil
	}
	return err == nil, err
}

// DeleteUser drops the ACL of a deleted user, as Java's deleteUser does
// (no ACL: nothing to do).
func (a *ACLs) DeleteUser(name string) error {
	if a.lookup(name) == nil {
		return nil
	}
	return a.change(func(m aclsByUser) error {
		delete(m, name)
		return nil
	})
}
