package auth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/vfs"
)

// TestACLsFileRoundTrip: create, merge, delete entries and reopen; the
// file holds Java's AclInfo records.
func TestACLsFileRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	users, err := OpenUsers(vfs.Default, filepath.Join(dir, UsersFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []User{{Username: "app", Password: "pw"}, {Username: "ops", Password: "pw"}} {
		if err := users.Create(u); err != nil {
			t.Fatal(err)
		}
	}
	path := ACLsPath(filepath.Join(dir, UsersFile))
	acls, err := OpenACLs(vfs.Default, path, users)
	if err != nil {
		t.Fatal(err)
	}
	put := func(info AclInfo) error {
		acl, err := ACLFromInfo(info, "")
		if err != nil {
			return err
		}
		return acls.Put(acl)
	}
	if err := put(AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		entry("Topic:a", []string{"Pub"}, "Allow"),
		entry("Group:g*", []string{"Sub", "Get"}, "Allow", "10.0.0.0/8"),
	}}}}); err != nil {
		t.Fatal(err)
	}
	// Update merges: Topic:a replaced, Topic:b added, a DEFAULT policy added.
	if err := put(AclInfo{Subject: "User:app", Policies: []PolicyInfo{
		{PolicyType: "Custom", Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Sub"}, "Deny"), entry("Topic:b", []string{"All"}, "Allow")}},
		{PolicyType: "Default", Entries: []PolicyEntryInfo{entry("*", []string{"Get"}, "Allow")}},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := put(AclInfo{Subject: "User:ops", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Cluster:*", []string{"All"}, "Allow")}}}}); err != nil {
		t.Fatal(err)
	}
	want := AclInfo{Subject: "User:app", Policies: []PolicyInfo{
		{PolicyType: "Custom", Entries: []PolicyEntryInfo{
			entry("Topic:a", []string{"Sub"}, "Deny"),
			entry("Group:g*", []string{"Sub", "Get"}, "Allow", "10.0.0.0/8"),
			entry("Topic:b", []string{"All"}, "Allow"),
		}},
		{PolicyType: "Default", Entries: []PolicyEntryInfo{entry("*", []string{"Get"}, "Allow")}},
	}}
	got, found, err := acls.Get("User:app")
	if err != nil || !found || !reflect.DeepEqual(got.Info(), want) {
		t.Fatalf("Get = %+v %v %v\nwant %+v", got.Info(), found, err, want)
	}
	// Reopened from the file: the same.
	again, err := OpenACLs(vfs.Default, path, users)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := again.Get("User:app"); !reflect.DeepEqual(got.Info(), want) {
		t.Fatalf("reopened = %+v", got.Info())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc aclsDoc
	if err := json.Unmarshal(data, &doc); err != nil || doc.Version != 1 || len(doc.ACLs) != 2 || doc.ACLs[0].Subject != "User:app" {
		t.Fatalf("file = %s (%v)", data, err)
	}
	// List filters: subject, and resource (entries cut down).
	if l := acls.List("ops", ""); len(l) != 1 || l[0].Username != "ops" {
		t.Fatalf("List(ops) = %+v", l)
	}
	if l := acls.List("", "Topic:b"); len(l) != 1 || len(l[0].Policies) != 1 || len(l[0].Policies[0].Entries) != 1 {
		t.Fatalf("List(resource Topic:b) = %+v", l)
	}
	// Delete one entry, then the rest of the custom policy, then all.
	res, _ := ParseResource("Topic:a")
	if err := acls.Delete("User:app", 0, &res); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := acls.Get("User:app"); len(got.Policies[0].Entries) != 2 {
		t.Fatalf("after delete: %+v", got.Info())
	}
	if err := acls.Delete("User:app", 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := acls.Get("User:app"); found {
		t.Fatal("ACL still there")
	}
	if err := acls.Delete("User:app", 0, nil); err == nil || err.Error() != "The acl is not exist." {
		t.Fatalf("delete again: %v", err)
	}
}

// TestACLValidation: Java's refusals, with its texts.
func TestACLValidation(t *testing.T) {
	users := memUsers(t, User{Username: "app", Password: "pw"})
	acls := memACLs(t, users)
	for _, tc := range []struct {
		info AclInfo
		want string
	}{
		{AclInfo{Subject: "User:ghost", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Pub"}, "Allow")}}}},
			"The subject of User:ghost is not exist."},
		{AclInfo{Subject: "User:app"}, "The policies is empty."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Queue:a", []string{"Pub"}, "Allow")}}}},
			"The resource is null."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Fly"}, "Allow")}}}},
			"The actions is empty."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Any"}, "Allow")}}}},
			"The actions can not be Any."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Pub"}, "Maybe")}}}},
			"The decision is null or illegal."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Pub"}, "Allow", "192.168.1.*")}}}},
			"The source ip is invalid."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Pub"}, "Allow", "192.168.1.1-10")}}}},
			"The source ip is invalid."},
		{AclInfo{Subject: "User:app", Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{entry("Topic:a", []string{"Pub"}, "Allow", "10.0.0.0/33")}}}},
			"The source ip is invalid."},
		{AclInfo{Subject: "Group:x"}, "The subject is invalid"},
	} {
		acl, err := ACLFromInfo(tc.info, "")
		if err == nil {
			err = acls.Put(acl)
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.info, err, tc.want)
		}
	}
	if l := acls.List("", ""); len(l) != 0 {
		t.Fatalf("refused ACLs stored: %+v", l)
	}
}

// TestParseResource: Java's Resource.of and getResourceKey.
func TestParseResource(t *testing.T) {
	for key, want := range map[string]Resource{
		"*":            {Type: ResAny, Pattern: PatternAny},
		"Topic:*":      {Type: ResTopic, Pattern: PatternAny},
		"topic:abc":    {Type: ResTopic, Name: "abc", Pattern: PatternLiteral},
		"Group:ab*":    {Type: ResGroup, Name: "ab", Pattern: PatternPrefixed},
		"Cluster:c1":   {Type: ResCluster, Name: "c1", Pattern: PatternLiteral},
		"Namespace:n*": {Type: ResNamespace, Name: "n", Pattern: PatternPrefixed},
	} {
		got, ok := ParseResource(key)
		if !ok || got != want {
			t.Errorf("ParseResource(%q) = %+v %v", key, got, ok)
		}
	}
	for _, bad := range []string{"", " ", "Queue:x", "abc", "Unknown:x"} {
		if r, ok := ParseResource(bad); ok {
			t.Errorf("ParseResource(%q) = %+v", bad, r)
		}
	}
	if k := (Resource{Type: ResTopic, Name: "ab", Pattern: PatternPrefixed}).Key(); k != "Topic:ab*" {
		t.Errorf("Key = %s", k)
	}
}

// TestACLsReplace: a slave's copy takes the master's ACLs, writes only on
// change, and leaves out an ACL whose user is gone.
func TestACLsReplace(t *testing.T) {
	users := memUsers(t, User{Username: "app", Password: "pw"})
	acls := memACLs(t, users)
	mk := func(user, res string) ACL {
		acl, err := ACLFromInfo(AclInfo{Subject: "User:" + user, Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
			entry(res, []string{"Pub"}, "Allow")}}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		return acl
	}
	if changed, err := acls.Replace([]ACL{mk("app", "Topic:a"), mk("gone", "Topic:a")}); err != nil || !changed {
		t.Fatalf("Replace = %v %v", changed, err)
	}
	if changed, err := acls.Replace([]ACL{mk("app", "Topic:a")}); err != nil || changed {
		t.Fatalf("Replace again = %v %v, want unchanged", changed, err)
	}
	if l := acls.List("", ""); len(l) != 1 || l[0].Username != "app" {
		t.Fatalf("List = %+v", l)
	}
	if err := acls.DeleteUser("app"); err != nil {
		t.Fatal(err)
	}
	if l := acls.List("", ""); len(l) != 0 {
		t.Fatalf("after DeleteUser: %+v", l)
	}
}
