package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
)

// haContext prefixes the content of an HA handshake signature, so that it
// can never equal the signature of a remoting request.
const haContext = "rocketd-ha-auth:"

// SignHAChallenge returns the slave's answer to a master's HA challenge:
// HmacSHA1(secretKey, "rocketd-ha-auth:" + challenge), raw (20 bytes).
func (c Credentials) SignHAChallenge(challenge []byte) []byte {
	h := hmac.New(sha1.New, []byte(c.SecretKey))
	h.Write([]byte(haContext))
	h.Write(challenge)
	return h.Sum(nil)
}

// VerifyHA checks a slave's answer to the challenge: accessKey names an
// enabled SUPER user (streaming the whole CommitLog is not for a NORMAL
// user) and sig is SignHAChallenge with that user's password, compared in
// constant time. It returns the reason of a refusal.
func (a *Authenticator) VerifyHA(accessKey string, challenge, sig []byte) (remark string, ok bool) {
	if accessKey == "" {
		return remarkNoUser, false
	}
	e := a.users.lookup(accessKey)
	switch {
	case e == nil:
		return "User:" + accessKey + " is not found.", false
	case e.user.UserStatus == Disabled:
		return "User:" + accessKey + " is disabled.", false
	case e.user.UserType != Super:
		return "User:" + accessKey + " is not a super user: HA replication needs one.", false
	}
	want := Credentials{SecretKey: e.user.Password}.SignHAChallenge(challenge)
	if subtle.ConstantTimeCompare(want, sig) != 1 {
		return remarkBadSignature, false
	}
	return "", true
}
