package auth

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// TestUsersFileRoundTrip: changes reach the file and a reopened table.
func TestUsersFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config", UsersFile)
	u, err := OpenUsers(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if created, err := u.Ensure(User{Username: "admin", Password: "pw", UserType: Super}); err != nil || !created {
		t.Fatalf("Ensure = %v, %v", created, err)
	}
	if created, err := u.Ensure(User{Username: "admin", Password: "other", UserType: Super}); err != nil || created {
		t.Fatalf("Ensure again = %v, %v (want the existing user kept)", created, err)
	}
	if err := u.Create(User{Username: "app", Password: "app-pw"}); err != nil {
		t.Fatal(err)
	}
	if err := u.Create(User{Username: "app", Password: "x"}); !errors.Is(err, ErrUserExists) {
		t.Fatalf("duplicate Create: %v", err)
	}
	if err := u.Update(User{Username: "ghost", Password: "x"}); !errors.Is(err, ErrUserNotExist) {
		t.Fatalf("Update of an unknown user: %v", err)
	}
	if err := u.Update(User{Username: "app", UserStatus: Disabled}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []User{{Username: " ", Password: "x"}, {Username: "x"}, {Username: "x", Password: "y", UserType: 9}} {
		if err := u.Create(bad); err == nil {
			t.Errorf("Create(%+v) accepted", bad)
		}
	}
	want := []User{
		{Username: "admin", Password: "pw", UserType: Super, UserStatus: Enabled},
		{Username: "app", Password: "app-pw", UserType: Normal, UserStatus: Disabled},
	}
	again, err := OpenUsers(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.List(""); !reflect.DeepEqual(got, want) {
		t.Fatalf("reopened = %+v, want %+v", got, want)
	}
	if got := again.List("dm"); len(got) != 1 || got[0].Username != "admin" {
		t.Fatalf("List(dm) = %+v", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Java's codes for type and status (UserType/UserStatus @JSONField(value=true)).
	if !strings.Contains(string(data), `"userType": 1`) || !strings.Contains(string(data), `"userStatus": 2`) {
		t.Fatalf("file does not hold Java's codes:\n%s", data)
	}
	if err := again.Delete("app"); err != nil {
		t.Fatal(err)
	}
	if _, ok := again.Get("app"); ok {
		t.Fatal("deleted user still there")
	}
}

// TestUsersFileNamesAndErrors: type and status by name load; a damaged
// file stops the start rather than leaving an empty table.
func TestUsersFileNamesAndErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, UsersFile)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write(`{"version":1,"users":[{"username":"a","password":"b","userType":"super","userStatus":"DISABLE"}]}`)
	u, err := OpenUsers(vfs.Default, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := u.Get("a"); got.UserType != Super || got.UserStatus != Disabled {
		t.Fatalf("by name: %+v", got)
	}
	for _, bad := range []string{
		`{"users":[`,
		`{"users":[{"username":"a","password":"b","userType":"root"}]}`,
		`{"users":[{"username":"a","password":""}]}`,
		`{"users":[{"username":"a","password":"b"},{"username":"a","password":"c"}]}`,
	} {
		if _, err := OpenUsers(vfs.Default, write(bad)); err == nil {
			t.Errorf("OpenUsers accepted %s", bad)
		}
	}
}

// TestUsersChangeNotMadeWhenFileFails: a change that cannot be written is
// not visible either.
func TestUsersChangeNotMadeWhenFileFails(t *testing.T) {
	fsys := vfs.NewErrorFS(vfs.NewMem(), vfs.FailFrom(vfs.OpSync, 0))
	u, err := OpenUsers(fsys, "/cfg/"+UsersFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Create(User{Username: "a", Password: "b"}); err == nil {
		t.Fatal("Create succeeded with a failing disk")
	}
	if _, ok := u.Get("a"); ok {
		t.Fatal("user visible although not written")
	}
}

// TestUsersReplace: a slave's copy takes the master's users, writes only
// on change, and refuses a copy with an invalid user whole.
func TestUsersReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), UsersFile)
	u, err := OpenUsers(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Create(User{Username: "local", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	master := []User{{Username: "a", Password: "pa", UserType: Super, UserStatus: Enabled}, {Username: "b", Password: "pb"}}
	if changed, err := u.Replace(master); err != nil || !changed {
		t.Fatalf("Replace = %v %v", changed, err)
	}
	if changed, err := u.Replace(master); err != nil || changed {
		t.Fatalf("Replace again = %v %v, want unchanged", changed, err)
	}
	if _, err := u.Replace([]User{{Username: "c"}}); err == nil {
		t.Fatal("a user without password copied")
	}
	again, err := OpenUsers(vfs.Default, path)
	if err != nil {
		t.Fatal(err)
	}
	got := again.List("")
	if len(got) != 2 || got[0].Username != "a" || got[1].Username != "b" || got[1].UserType != Normal {
		t.Fatalf("reopened = %+v", got)
	}
}
