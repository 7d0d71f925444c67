package config

import (
	"slices"
	"testing"
)

// TestNoEffectBrokerKeys: the keys a file sets that rocketd has no use for
// are named, spelled as written, sorted; keys that work and unknown keys are
// not (the unknown ones have their own warning).
func TestNoEffectBrokerKeys(t *testing.T) {
	props := Properties{
		"transferMsgByHeap": "false", "ForceRegister": "true", "timerPrecisionMs": "500",
		"checkCRCOnRecover": "false", "accessMessageInMemoryMaxRatio": "30", "noSuchKey": "1",
		"brokerName": "b",
	}
	got := NoEffectBrokerKeys(props)
	if want := []string{"ForceRegister", "timerPrecisionMs", "transferMsgByHeap"}; !slices.Equal(got, want) {
		t.Fatalf("NoEffectBrokerKeys = %v, want %v", got, want)
	}
	if got := NoEffectBrokerKeys(Properties{"brokerName": "b"}); len(got) != 0 {
		t.Fatalf("keys with an effect reported: %v", got)
	}
	// Bind accepts the file (the keys are parsed and validated).
	if _, _, err := BrokerConfigFromProperties(props); err != nil {
		t.Fatal(err)
	}
}
