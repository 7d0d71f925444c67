package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketd/rocketd/internal/vfs"
)

// UsersFile is the name of the users file in the broker's config directory
// (next to topics.json).
const UsersFile = "users.json"

// Errors of user management, with Java's texts
// (AuthenticationMetadataManagerImpl).
var (
	ErrUserExists   = errors.New("The user is existed")
	ErrUserNotExist = errors.New("The user is not exist")
)

// usersDoc is the users file's layout (doc.go).
type usersDoc struct {
	Version int    `json:"version"`
	Users   []User `json:"users"`
}

// usersFileVersion is the layout version written in the file.
const usersFileVersion = 1

// userEntry is a stored user with the HMAC states keyed by its password.
type userEntry struct {
	user User
	mac  *macPool
}

// Users is the user table: read without locks on every request, changed
// rarely (start-up, admin requests), each change written to the file
// before it is visible.
type Users struct {
	fsys vfs.FS
	path string // "" keeps the table in memory only (tests)

	mu  sync.Mutex                            // serializes changes and file writes
	cur atomic.Pointer[map[string]*userEntry] // copy-on-write
}

// OpenUsers loads the users file at path (an absent file is an empty
// table; a file that does not parse is an error: starting with no users
// would lock everyone out, or hide a lost table).
func OpenUsers(fsys vfs.FS, path string) (*Users, error) {
	u := &Users{fsys: fsys, path: path}
	empty := map[string]*userEntry{}
	u.cur.Store(&empty)
	if path == "" {
		return u, nil
	}
	data, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return u, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: read %s: %w", path, err)
	}
	var doc usersDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	m := make(map[string]*userEntry, len(doc.Users))
	for _, usr := range doc.Users {
		usr.fillDefaults()
		if err := usr.validate(); err != nil {
			return nil, fmt.Errorf("auth: %s: %w", path, err)
		}
		if _, dup := m[usr.Username]; dup {
			return nil, fmt.Errorf("auth: %s: user %s listed twice", path, usr.Username)
		}
		m[usr.Username] = &userEntry{user: usr, mac: newMacPool(usr.Password)}
	}
	u.cur.Store(&m)
	return u, nil
}

// lookup returns the entry of name (nil when unknown).
func (u *Users) lookup(name string) *userEntry { return (*u.cur.Load())[name] }

// Get returns the user called name.
func (u *Users) Get(name string) (User, bool) {
	if e := u.lookup(name); e != nil {
		return e.user, true
	}
	return User{}, false
}

// List returns the users whose name contains filter ("" = all), sorted by
// name (Java's listUser filter).
func (u *Users) List(filter string) []User {
	var out []User
	for _, e := range *u.cur.Load() {
		if strings.Contains(e.user.Username, filter) {
			out = append(out, e.user)
		}
	}
	slices.SortFunc(out, func(a, b User) int { return strings.Compare(a.Username, b.Username) })
	return out
}

// Create adds a user (type NORMAL, status ENABLE unless given);
// ErrUserExists when the name is taken.
func (u *Users) Create(usr User) error {
	usr.fillDefaults()
	if err := usr.validate(); err != nil {
		return err
	}
	return u.change(func(m map[string]*userEntry) error {
		if m[usr.Username] != nil {
			return ErrUserExists
		}
		m[usr.Username] = &userEntry{user: usr, mac: newMacPool(usr.Password)}
		return nil
	})
}

// Ensure creates usr unless a user of that name exists (the start-up
// users: initAuthenticationUser, innerClientAuthenticationCredentials).
// An existing user is left as it is, as Java does: the file is the truth
// once written.
func (u *Users) Ensure(usr User) (created bool, err error) {
	err = u.Create(usr)
	if errors.Is(err, ErrUserExists) {
		return false, nil
	}
	return err == nil, err
}

// Update changes the password, type or status given (zero values keep
// the current ones), as Java's updateUser.
func (u *Users) Update(usr User) error {
	if strings.TrimSpace(usr.Username) == "" {
		return invalid("username can not be blank")
	}
	return u.change(func(m map[string]*userEntry) error {
		old := m[usr.Username]
		if old == nil {
			return ErrUserNotExist
		}
		next := old.user
		if strings.TrimSpace(usr.Password) != "" {
			next.Password = usr.Password
		}
		if usr.UserType != 0 {
			next.UserType = usr.UserType
		}
		if usr.UserStatus != 0 {
			next.UserStatus = usr.UserStatus
		}
		if err := next.validate(); err != nil {
			return err
		}
		m[usr.Username] = &userEntry{user: next, mac: newMacPool(next.Password)}
		return nil
	})
}

// Delete removes the user called name; deleting an unknown user is not an
// error (Java's deleteUser).
func (u *Users) Delete(name string) error {
	if strings.TrimSpace(name) == "" {
		return invalid("username can not be blank")
	}
	return u.change(func(m map[string]*userEntry) error {
		delete(m, name)
		return nil
	})
}

// change applies edit to a copy of the table, writes the file, then
// publishes the copy: a change that cannot be made durable is not made.
func (u *Users) change(edit func(map[string]*userEntry) error) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	old := *u.cur.Load()
	next := make(map[string]*userEntry, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if err := edit(next); err != nil {
		return err
	}
	if err := u.write(next); err != nil {
		return err
	}
	u.cur.Store(&next)
	return nil
}

// write replaces the users file with m (doc.go). It holds u.mu across the
// fsync on purpose: changes are rare admin operations, and two writers
// must not race on the temporary file.
func (u *Users) write(m map[string]*userEntry) error {
	if u.path == "" {
		return nil
	}
	doc := usersDoc{Version: usersFileVersion, Users: make([]User, 0, len(m))}
	for _, e := range m {
		doc.Users = append(doc.Users, e.user)
	}
	slices.SortFunc(doc.Users, func(a, b User) int { return strings.Compare(a.Username, b.Username) })
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode users: %w", err)
	}
	if err := vfs.MkdirAllSync(u.fsys, filepath.Dir(u.path), 0o755); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := vfs.WriteFileAtomic(u.fsys, u.path, data); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	return nil
}

// Replace makes the table hold exactly users (a slave copying its
// master's table), writing the file only when something changed. A user
// that does not validate, or a name listed twice, refuses the whole copy.
func (u *Users) Replace(users []User) (changed bool, err error) {
	want := make(map[string]User, len(users))
	for _, usr := range users {
		usr.fillDefaults()
		if err := usr.validate(); err != nil {
			return false, err
		}
		if _, dup := want[usr.Username]; dup {
			return false, fmt.Errorf("auth: user %s listed twice", usr.Username)
		}
		want[usr.Username] = usr
	}
	err = u.change(func(m map[string]*userEntry) error {
		same := len(m) == len(want)
		for name, e := range m {
			if w, ok := want[name]; !ok || w != e.user {
				same = false
			}
		}
		if same {
			return errUnchanged
		}
		clear(m)
		for name, usr := range want {
			m[name] = &userEntry{user: usr, mac: newMacPool(usr.Password)}
		}
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return false, nil
	}
	return err == nil, err
}

// errUnchanged ends a change that would change nothing, before the write.
var errUnchanged = errors.New("auth: unchanged")
