package auth

import (
	"encoding/json"
	"fmt"
	"strings"
)

// UserType is Java's UserType, stored and sent as its code.
type UserType uint8

const (
	Super  UserType = 1 // "Super": may do anything, and manage users
	Normal UserType = 2 // "Normal": subject to ACL policies
)

// String returns Java's name of the type.
func (t UserType) String() string {
	switch t {
	case Super:
		return "Super"
	case Normal:
		return "Normal"
	}
	return fmt.Sprintf("UserType(%d)", uint8(t))
}

// ParseUserType accepts Java's names, in any case (UserType.getByName).
func ParseUserType(s string) (UserType, bool) {
	switch strings.ToLower(s) {
	case "super":
		return Super, true
	case "normal":
		return Normal, true
	}
	return 0, false
}

// UserStatus is Java's UserStatus, stored and sent as its code.
type UserStatus uint8

const (
	Enabled  UserStatus = 1 // "enable"
	Disabled UserStatus = 2 // "disable": every request signed by the user is refused
)

// String returns Java's name of the status.
func (s UserStatus) String() string {
	switch s {
	case Enabled:
		return "enable"
	case Disabled:
		return "disable"
	}
	return fmt.Sprintf("UserStatus(%d)", uint8(s))
}

// ParseUserStatus accepts Java's names, in any case (UserStatus.getByName).
func ParseUserStatus(s string) (UserStatus, bool) {
	switch strings.ToLower(s) {
	case "enable":
		return Enabled, true
	case "disable":
		return Disabled, true
	}
	return 0, false
}

// User is one account: Java's auth User. The password is the secret key
// the clients sign with (SessionCredentials.secretKey); it is stored as
// given, as Java stores it, because the HMAC needs it.
type User struct {
	Username   string     `json:"username"`
	Password   string     `json:"password"`
	UserType   UserType   `json:"userType"`
	UserStatus UserStatus `json:"userStatus"`
}

// ValidationError is a user that cannot be stored (a blank name or
// password, an unknown type or status), with Java's text.
type ValidationError struct{ msg string }

func (e *ValidationError) Error() string { return e.msg }

func invalid(format string, args ...any) error {
	return &ValidationError{msg: fmt.Sprintf(format, args...)}
}

// validate is Java's AuthenticationMetadataManagerImpl.validate for a
// user to store, after defaults were filled.
func (u *User) validate() error {
	if strings.TrimSpace(u.Username) == "" {
		return invalid("username can not be blank")
	}
	if strings.TrimSpace(u.Password) == "" {
		return invalid("password can not be blank")
	}
	if u.UserType != Super && u.UserType != Normal {
		return invalid("user %s: unknown userType %d", u.Username, u.UserType)
	}
	if u.UserStatus != Enabled && u.UserStatus != Disabled {
		return invalid("user %s: unknown userStatus %d", u.Username, u.UserStatus)
	}
	return nil
}

// fillDefaults gives a user without type or status Java's defaults:
// NORMAL and ENABLE (createUser).
func (u *User) fillDefaults() {
	if u.UserType == 0 {
		u.UserType = Normal
	}
	if u.UserStatus == 0 {
		u.UserStatus = Enabled
	}
}

// UnmarshalJSON accepts the type and status as Java writes them (their
// codes) or by name ("Super", "enable"), as fastjson reads an enum.
func (t *UserType) UnmarshalJSON(b []byte) error {
	var n uint8
	if err := json.Unmarshal(b, &n); err == nil {
		*t = UserType(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("userType %s: want a code or a name", b)
	}
	v, ok := ParseUserType(s)
	if !ok {
		return fmt.Errorf("userType %q: want Super or Normal", s)
	}
	*t = v
	return nil
}

// UnmarshalJSON: see UserType.UnmarshalJSON.
func (s *UserStatus) UnmarshalJSON(b []byte) error {
	var n uint8
	if err := json.Unmarshal(b, &n); err == nil {
		*s = UserStatus(n)
		return nil
	}
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return fmt.Errorf("userStatus %s: want a code or a name", b)
	}
	v, ok := ParseUserStatus(name)
	if !ok {
		return fmt.Errorf("userStatus %q: want enable or disable", name)
	}
	*s = v
	return nil
}
