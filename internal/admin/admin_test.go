package admin

import (
	"encoding/json"
	"testing"
)

func TestConsumeResultNameOrOrdinal(t *testing.T) {
	for in, want := range map[string]ConsumeResult{`"CR_LATER"`: "CR_LATER", `0`: "CR_SUCCESS", `4`: "CR_THROW_EXCEPTION"} {
		var r ConsumeResult
		if err := json.Unmarshal([]byte(in), &r); err != nil || r != want {
			t.Errorf("%s: %q %v, want %q", in, r, err, want)
		}
	}
	for _, bad := range []string{`9`, `-1`, `true`} {
		var r ConsumeResult
		if err := json.Unmarshal([]byte(bad), &r); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
